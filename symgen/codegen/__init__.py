"""Code generation: symbolic runs and passes (``symbolic``, ``program``), printed files
(``files``, ``printers``, ``render``, ``names``), the package on disk (``package``), and
``build``, which runs them in that order."""


class Progress:
    """What a build reports: a message per stage and the ticks of each symbolic run (per j of
    Algorithm 1, per k of Algorithm 2). Silent; the CLI's progress bar overrides both."""

    def message(self, text: str) -> None:
        pass

    def tick(self, label: str, done: int, total: int) -> None:
        pass
