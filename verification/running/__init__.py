"""How statements are run: the runner (select, run, the table), one statement in a process
(:mod:`.running.execute`), worker processes (:mod:`.running.parallel`), time limits (:mod:`.running.timeouts`),
interrupts and resume, the self-test against the bug zoo, the counterexample search and the command line's
own steps (:mod:`.running.commands`)."""
