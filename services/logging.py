"""structlog setup: JSON lines in production, console in development. Context variables
bound with ``structlog.contextvars`` are merged into every line; the gateway's
``command_refused`` line names the command, table and round itself."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(fmt: str = "json", level: int = logging.INFO) -> None:
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer() if fmt == "console" else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
