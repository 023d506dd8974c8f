"""Logging for torch_ops_nn, levelled by CANN's ASCEND_GLOBAL_LOG_LEVEL.

0 = debug (every kernel launch with op, shapes, dtypes, blockDim, device and duration),
1 = info, 2 = warning, 3 = error (the default). Records go to the ``torch_ops_nn`` logger, which
writes to stderr unless the application configured logging itself.
"""
import logging
import os

logger = logging.getLogger("torch_ops_nn")

# ASCEND_GLOBAL_LOG_LEVEL -> Python logging level
_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}


def level_from_env() -> int:
    raw = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL", "3").strip() or "3"
    try:
        value = int(raw)
    except ValueError:
        value = 3
    return min(max(value, 0), 3)


def emit(level: int, message: str) -> None:
    """Called by the native runtime (never from a stream's executor thread)."""
    logger.log(_LEVELS.get(level, logging.ERROR), message)


def configure(native) -> None:
    level = level_from_env()
    logger.setLevel(_LEVELS[level])
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[%(levelname)s] torch_ops_nn: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    native._set_log_level(level)
    native._set_log_callback(emit)


def set_level(native, level: int) -> None:
    """Change the level at run time (same scale as ASCEND_GLOBAL_LOG_LEVEL)."""
    if level not in _LEVELS:
        raise ValueError(f"log level must be 0 (debug), 1 (info), 2 (warning) or 3 (error), got {level!r}")
    logger.setLevel(_LEVELS[level])
    native._set_log_level(level)
