"""Configuration: the immutable Config, the catalogue of known keys, and loaders."""

from samza_nb.config.catalogue import KEYS, default_of, job_id, job_name, spec_for
from samza_nb.config.config import Config
from samza_nb.config.key_check import check_key_spelling, unknown_key_warnings
from samza_nb.config.key_spec import KeySpec
from samza_nb.config.loaders import load_config, parse_properties

__all__ = [
    "KEYS",
    "Config",
    "KeySpec",
    "check_key_spelling",
    "default_of",
    "job_id",
    "job_name",
    "load_config",
    "parse_properties",
    "spec_for",
    "unknown_key_warnings",
]
