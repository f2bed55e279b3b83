"""Shared helpers of the test suite, one module per idea, imported by their full path
(``from tests.support.factories import fact``). Test modules never import one another: what two test
modules share lives here, and shared fixtures live in the ``conftest.py`` of the folder that uses them.

* :mod:`tests.support.paths` - the repository root, ``app.py``, ``tests/data``;
* :mod:`tests.support.samples` - the synthetic bundled-samples folder (no model);
* :mod:`tests.support.factories` - tiny KnowledgeBases, Corpora and Scenarios from explicit vectors;
* :mod:`tests.support.embedders` - embedding doubles (hashing, gated);
* :mod:`tests.support.pages` - AppTest helpers of the page tests;
* :mod:`tests.support.browser` - Playwright helpers of the e2e tests;
* :mod:`tests.support.suites` - a tiny labelled suite;
* :mod:`tests.support.hostile` - the hostile-input harness;
* the worlds and cases several test modules share: :mod:`~tests.support.sweep_case`,
  :mod:`~tests.support.fanout_worlds`, :mod:`~tests.support.pipeline_worlds`,
  :mod:`~tests.support.scan_worlds`, :mod:`~tests.support.fanout_topics`, :mod:`~tests.support.ckf_formats`,
  :mod:`~tests.support.triage_cli`, :mod:`~tests.support.conflicts_page`, :mod:`~tests.support.e2e_conflicts`.
"""
