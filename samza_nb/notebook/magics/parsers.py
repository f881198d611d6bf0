"""The argument parser of each magic that has one: its options and their help (the magics reference is
generated from :data:`PARSERS`)."""

from __future__ import annotations

from samza_nb.notebook.magics import get, steering
from samza_nb.notebook.magics.arguments import MagicArguments
from samza_nb.notebook.magics.browse import BROWSE_ARGS

RUN_ARGS = MagicArguments("samza_run")
RUN_ARGS.add_argument("--wait", action="store_true", help="wait until every input reached end-of-stream")
RUN_ARGS.add_argument(
    "--paused",
    action="store_true",
    help="start paused: not one message before %%samza_step or %%samza_resume",
)
RUN_ARGS.add_argument("--timeout", type=float, metavar="S", help="stop gracefully after S seconds")
RUN_ARGS.add_argument("--max-messages", type=int, metavar="N", help="stop gracefully after N messages")
RUN_ARGS.add_argument("--no-dashboard", action="store_true", help="one line of text instead of the dashboard")
RUN_ARGS.add_argument(
    "--trace", action="store_true", help="record every chooser decision in samza.decisions (slower)"
)
RUN_ARGS.add_argument(
    "--runner",
    choices=("local", "spark"),
    default="local",
    help="local: a container on a thread of the kernel; spark: the containers as the tasks of one Spark job",
)
RUN_ARGS.add_argument("--name", help="run it as job NAME (several named jobs may run at once)")
RUN_ARGS.add_argument("--record", metavar="DIR", help="record the run's schedule into DIR (for a replay)")
RUN_ARGS.add_argument(
    "--replay", metavar="DIR", help="replay the schedule recorded in DIR (from a fresh state)"
)

JOB_NAME_HELP = "the job (default: the latest)"

CHECKPOINT_ARGS = MagicArguments("samza_checkpoints")
CHECKPOINT_ARGS.add_argument(
    "--reset", action="store_true", help="forget the job's in-memory checkpoints (the next run starts afresh)"
)
CHECKPOINT_ARGS.add_argument("name", nargs="?", metavar="NAME", help=JOB_NAME_HELP)

CLEAN_ARGS = MagicArguments("samza_clean")
CLEAN_ARGS.add_argument("--dry-run", action="store_true", help="list what would be removed; remove nothing")
CLEAN_ARGS.add_argument("--all", dest="everything", action="store_true", help="the current generation too")
CLEAN_ARGS.add_argument("--topics", action="store_true", help="with --all: the job's Kafka topics too")
CLEAN_ARGS.add_argument("name", nargs="?", metavar="NAME", help=JOB_NAME_HELP)

NAME_ARGS = {
    magic: MagicArguments(magic) for magic in ("samza_stop", "samza_status", "samza_resume", "samza_time")
}
for _magic, _parser in NAME_ARGS.items():
    _parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="the job (default: every running job)" if _magic == "samza_stop" else JOB_NAME_HELP,
    )

PAUSE_ARGS = MagicArguments("samza_pause")
PAUSE_ARGS.add_argument("name", nargs="?", metavar="NAME", help=JOB_NAME_HELP)
PAUSE_ARGS.add_argument(
    "--timeout",
    type=float,
    default=steering.DEFAULT_PAUSE_TIMEOUT_S,
    metavar="S",
    help="how long to wait for the job to be quiet (seconds)",
)

PEEK_ARGS = MagicArguments("samza_peek")
PEEK_ARGS.add_argument("name", nargs="?", metavar="NAME", help=JOB_NAME_HELP)
PEEK_ARGS.add_argument("--timeout", type=float, default=steering.DEFAULT_PAUSE_TIMEOUT_S, metavar="S")

STEP_ARGS = MagicArguments("samza_step")
STEP_ARGS.add_argument("n", nargs="?", type=int, default=1, metavar="N", help="how many messages (default 1)")
STEP_ARGS.add_argument("--name", help=JOB_NAME_HELP)
STEP_ARGS.add_argument("--timeout", type=float, metavar="S", help="how long to wait for the N messages")

SET_ARGS = MagicArguments("samza_set")
SET_ARGS.add_argument("assignments", nargs="*", metavar="KEY=VALUE", help="the live knobs to change")
SET_ARGS.add_argument("--name", help=JOB_NAME_HELP)

DEFINE_ARGS = {magic: MagicArguments(magic) for magic in ("samza_task", "samza_app")}
for _parser in DEFINE_ARGS.values():
    _parser.add_argument(
        "class_name", nargs="?", metavar="ClassName", help="the class to use, when the cell defines several"
    )
    _parser.add_argument(
        "--swap",
        nargs="?",
        const="",
        metavar="NAME",
        help="also replace the code of the running job NAME (default: the latest)",
    )

PARSERS: dict[str, MagicArguments] = {
    "samza_run": RUN_ARGS,
    "samza_checkpoints": CHECKPOINT_ARGS,
    "samza_clean": CLEAN_ARGS,
    "samza_pause": PAUSE_ARGS,
    "samza_step": STEP_ARGS,
    "samza_peek": PEEK_ARGS,
    "samza_set": SET_ARGS,
    "samza_browse": BROWSE_ARGS,
    "samza_get": get.GET_ARGS,
    **NAME_ARGS,
    **DEFINE_ARGS,
}
"""The argument parser of each magic that has one (the magics reference is generated from them)."""


__all__ = [
    "CHECKPOINT_ARGS",
    "CLEAN_ARGS",
    "DEFINE_ARGS",
    "NAME_ARGS",
    "PARSERS",
    "PAUSE_ARGS",
    "PEEK_ARGS",
    "RUN_ARGS",
    "SET_ARGS",
    "STEP_ARGS",
]
