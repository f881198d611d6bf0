"""The file system: text files as streams, one message per line. For examples, scripts and small jobs.

``systems.<s>.samza.factory = samza_nb.systems.file.FileSystemFactory``.
"""

from samza_nb.systems.file.system import FileSystemFactory

__all__ = ["FileSystemFactory"]
