"""What a run produces: the certificate record and its exit code (:mod:`.certificate.record`), the
table (:mod:`.certificate.table`), per-paper coverage and verdicts, reproducers and replay, the comparison of two
certificates, JUnit XML, and the pages generated from certificates (summary blocks, the compatibility page)."""
