"""One exception family: errors the user or the environment caused, shown as one line."""


class ClinicError(Exception):
    """A known problem with a one-sentence explanation; the CLI exits 2, the GUI shows it."""

    exit_code = 2


class UsageError(ClinicError):
    """Bad command-line usage or bad input (a path that does not exist, an unknown id)."""


class TargetPythonError(ClinicError):
    """The target interpreter cannot be run (missing, not executable, not Python)."""


class KBError(ClinicError):
    """The knowledge base is malformed: the message names the file, the field and the problem."""


class HistoryError(ClinicError):
    """The user database could not be opened or repaired."""


class HistoryBusyError(HistoryError):
    """Another program holds the user database's lock longer than we wait: nothing is damaged."""


class HistoryRowError(HistoryError):
    """One stored run cannot be read (not JSON, not an object, nested too deeply)."""


class InputError(UsageError):
    """A file or text the user handed us does not hold what it should (too large, too deep,
    not JSON, a field of the wrong type): the message names the file and the field."""
