"""Certificates: calibrated thresholds with finite-sample, distribution-free promises.

Modules (each small, each citing its paper):

* :mod:`~harness.certificates.data` -- the ``calibration.jsonl`` format: writer helpers for
  ``harness bench`` and the strict reader;
* :mod:`~harness.certificates.conformal` -- split conformal context sizing, adaptive sets and
  the fixed-K baseline (Romano, Sesia & Candes 2020);
* :mod:`~harness.certificates.risk` -- risk-controlled abstention, learn then test with
  fixed-sequence testing (Bates et al. 2021);
* :mod:`~harness.certificates.serving` -- ``set_size`` and ``should_answer``: the pure
  functions a serving path runs (pinned by golden vectors);
* :mod:`~harness.certificates.fingerprint` and :mod:`~harness.certificates.status` -- what a
  certificate was calibrated on, and valid / degenerate / expired / alarm;
* :mod:`~harness.certificates.monitor` -- the anytime-valid one-sided coverage monitor
  (betting e-process, Waudby-Smith & Ramdas 2024);
* :mod:`~harness.certificates.drift` -- frozen vs rolling vs adaptive thresholds under shift
  (Gibbs & Candes 2021);
* :mod:`~harness.certificates.ppi` -- prediction-powered inference for judge scores
  (Angelopoulos et al. 2023, PPI++);
* :mod:`~harness.certificates.build` and :mod:`harness.claims.certificate` -- the
  certificate and PPI JSON documents (``kind`` ``certificate`` / ``ppi``).

Importing this package imports nothing else.
"""
