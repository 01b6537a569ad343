"""The ``symgen`` command line. Argument parsing only: every command calls library functions.

A user error (a :class:`~symgen.errors.SymgenError`) ends the command with one line on stderr,
``symgen: <file>: <element>: <reason>``, and exit code 2 — never a traceback.
"""
from __future__ import annotations

import sys

import click

from . import __version__
from .errors import SymgenError


class _Group(click.Group):
    """Turns SymgenError from any command into one line on stderr and exit code 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SymgenError as exc:
            click.echo(f"symgen: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="symgen")
def main():
    """Unrolled NumPy and C code for M, Mdot, the Christoffel-consistent Coriolis matrix C, the
    Christoffel symbols Gamma and inverse dynamics of a robot described by a URDF."""


@main.command()
@click.argument("urdf", type=click.Path(dir_okay=False))
@click.option("--floating-base", is_flag=True, help="Give the root link six virtual joints (3 prismatic, 3 revolute).")
def info(urdf, floating_base):
    """Summarize a robot: bodies, joints in q order, DoF, depth, what was lumped and snapped."""
    from .report import describe
    from .urdf import load_urdf

    click.echo(describe(load_urdf(urdf, floating_base=floating_base)))


@main.command()
@click.argument("kind")
@click.argument("n", type=int)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random parameters.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="URDF file to write.")
def model(kind, n, seed, output):
    """Write one of the paper's synthetic systems as URDF: KIND is serial, planar, tree, biped or
    quadruped; N is the number of bodies (actuated joints for biped and quadruped)."""
    from . import robots
    from .urdf import write_urdf

    robot = robots.make(kind, n, seed)
    write_urdf(robot, output)
    click.echo(f"wrote {output}: {robot.name}, {robot.n} joints, depth {robot.depth}")


if __name__ == "__main__":  # pragma: no cover
    main()
