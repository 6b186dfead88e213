//! lagadvisor's native core (`lagadvisor._native`): the hot loops of the binlog reader,
//! writeset hashing, clock computation and the applier simulation. The pure-Python
//! implementation stays the reference (LAGADVISOR_PUREPYTHON=1 forces it).
use pyo3::prelude::*;

mod reader;
mod sim;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    reader::register(m)?;
    sim::register(m)?;
    Ok(())
}
