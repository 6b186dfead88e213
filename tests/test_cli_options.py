"""The options shared between commands are declared once (``lagadvisor.commands.options``) and
every command that reads binlogs takes the same ones (issue 21)."""

from __future__ import annotations

import dataclasses

import pytest
import typer.main

from lagadvisor.cli import app
from lagadvisor.commands.options import ClockArgs, ServerArgs, WindowArgs

READERS = ("analyze", "export", "simulate", "graph", "advise")


def params(command: str) -> set[str]:
    click_app = typer.main.get_command(app)
    return {p.name for p in click_app.commands[command].params}


def names(group) -> set[str]:
    return {f.name for f in dataclasses.fields(group)}


@pytest.mark.parametrize("command", READERS)
def test_binlog_readers_take_every_shared_option(command):
    assert names(ServerArgs) | names(ClockArgs) | names(WindowArgs) <= params(command)


@pytest.mark.parametrize("command", ("calibrate", "eta"))
def test_server_commands_take_the_whole_connection_group(command):
    assert names(ServerArgs) <= params(command)


def test_fleet_takes_the_clock_group():
    assert names(ClockArgs) <= params("fleet")


def test_ssl_client_certificate_everywhere_a_server_is_read():
    for command in (*READERS, "calibrate", "eta"):
        assert {"ssl_cert", "ssl_key", "ssl_ca", "ssl_mode"} <= params(command), command


def test_jobs_and_progress_are_one_option():
    click_app = typer.main.get_command(app)
    jobs = [next(p for p in click_app.commands[c].params if p.name == "jobs") for c in ("analyze", "simulate")]
    assert jobs[0].opts == jobs[1].opts and jobs[0].help == jobs[1].help
    assert (jobs[0].min, jobs[0].max) == (jobs[1].min, jobs[1].max) == (0, 1024)
