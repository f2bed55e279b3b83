"""values_conflict: the SPEC-005 §5.3 patterns applied pairwise (SPEC-027 §2.2, docs/reference/pipeline.md §4)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.stages.contradictions import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    tokenize,
    values_conflict,
)


def only_diff(a: str, b: str):
    vc = values_conflict(a, b)
    assert vc is not None, f"expected a conflict between {a!r} and {b!r}"
    assert len(vc.diffs) == 1, vc.diffs
    return vc, vc.diffs[0]


def marked(text: str, span: tuple[int, int]) -> str:
    return text[span[0] : span[1]]


# ---- NUMBER_CHANGED ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, ta, tb",
    [
        ("etcd default client port is 2379", "etcd default client port is 4001", "2379", "4001"),
        ("Revenue was $4.2M in the third quarter", "Revenue was $4.8M in the third quarter", "$4.2M", "$4.8M"),
        ("Backups are kept for 30 days", "Backups are kept for 90 days", "30 days", "90 days"),
        (
            "Set max_connections to 100 in postgresql.conf",
            "Set max_connections to 200 in postgresql.conf",
            "100",
            "200",
        ),
        ("The cluster runs three control-plane nodes", "The cluster runs five control-plane nodes", "three", "five"),
        ("The kubelet listens on port 10,250", "The kubelet listens on port 10,255", "10,250", "10,255"),
    ],
)
def test_number_changed(a, b, ta, tb):
    vc, d = only_diff(a, b)
    assert vc.patterns == (NUMBER_CHANGED,)
    assert d.pattern == NUMBER_CHANGED
    assert d.tokens_a == (ta,) and d.tokens_b == (tb,)
    assert marked(a, d.span_a) == ta and marked(b, d.span_b) == tb


def test_etcd_ports_are_numbers_not_years():
    # 2379 and 4001 are 4-digit numbers outside 1900-2099: NUMBER_CHANGED (docs/reference/pipeline.md §4)
    vc = values_conflict("The default client port of etcd is 2379.", "The default client port of etcd is 4001.")
    assert vc is not None and vc.patterns == (NUMBER_CHANGED,)
    d = vc.diffs[0]
    assert d.span_a == (35, 39) and d.span_b == (35, 39)
    # a year against a port is still a number change: only two years make a date shift
    vc2 = values_conflict("The default port is 2000", "The default port is 2379")
    assert vc2 is not None and vc2.patterns == (NUMBER_CHANGED,)


def test_reordered_sentence_with_changed_number():
    a = "The default client port of etcd is 2379"
    b = "etcd uses 4001 as its default client port"
    vc, d = only_diff(a, b)
    assert vc.patterns == (NUMBER_CHANGED,)
    assert marked(a, d.span_a) == "2379" and marked(b, d.span_b) == "4001"


# ---- DATE_SHIFTED --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, ta, tb",
    [
        ("The regulation was enacted in 2024.", "The regulation was enacted in 2025.", "2024", "2025"),
        ("The release shipped on March 5, 2024", "The release shipped on March 7, 2024", "5", "7"),
        ("The limit was raised in May 2021", "The limit was raised in June 2021", "May", "June"),
        ("The certificate expires on 2024-03-05", "The certificate expires on 2024-04-05", "2024-03-05", "2024-04-05"),
    ],
)
def test_date_shifted(a, b, ta, tb):
    vc, d = only_diff(a, b)
    assert vc.patterns == (DATE_SHIFTED,)
    assert d.tokens_a == (ta,) and d.tokens_b == (tb,)
    assert marked(a, d.span_a) == ta and marked(b, d.span_b) == tb


def test_years_2024_2025_shift_dates():
    vc = values_conflict("Support for v1 ends in 2024", "Support for v1 ends in 2025")
    assert vc is not None and vc.patterns == (DATE_SHIFTED,)


# ---- MAGNITUDE_ALTERED ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, ta, tb",
    [
        ("Latency increased by 15% after the upgrade", "Latency increased by 50% after the upgrade", "15%", "50%"),
        ("The new engine is 3x faster", "The new engine is 5× faster", "3x", "5×"),
        ("Revenue was $4.2M last year", "Revenue was $4.2B last year", "$4.2M", "$4.2B"),
        ("The user base grew to 5 million", "The user base grew to 5 billion", "5 million", "5 billion"),
        ("Compaction makes reads twice as fast", "Compaction makes reads three times as fast", "twice", "three times"),
        (
            "GDPR fines can reach 4 percent of turnover",
            "GDPR fines can reach 2 percent of turnover",
            "4 percent",
            "2 percent",
        ),
    ],
)
def test_magnitude_altered(a, b, ta, tb):
    vc, d = only_diff(a, b)
    assert vc.patterns == (MAGNITUDE_ALTERED,)
    assert d.tokens_a == (ta,) and d.tokens_b == (tb,)
    assert marked(a, d.span_a) == ta and marked(b, d.span_b) == tb


# ---- ENTITY_SUBSTITUTED --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, ta, tb",
    [
        (
            "According to NIST, keys must be rotated yearly",
            "According to ISO, keys must be rotated yearly",
            "NIST",
            "ISO",
        ),
        ("Use etcd v3.5 with this release", "Use etcd v3.4 with this release", "v3.5", "v3.4"),
        (
            "The config file is /etc/kubernetes/admin.conf",
            "The config file is /etc/kubernetes/kubelet.conf",
            "/etc/kubernetes/admin.conf",
            "/etc/kubernetes/kubelet.conf",
        ),
        (
            "The bucket lives in the AWS region us-east-1",
            "The bucket lives in the AWS region eu-west-1",
            "us-east-1",
            "eu-west-1",
        ),
        ("The primary cluster is hosted on Azure", "The primary cluster is hosted on GCP", "Azure", "GCP"),
        (
            "Set the flag --data-dir for the data directory",
            "Set the flag --wal-dir for the data directory",
            "--data-dir",
            "--wal-dir",
        ),
    ],
)
def test_entity_substituted(a, b, ta, tb):
    vc, d = only_diff(a, b)
    assert vc.patterns == (ENTITY_SUBSTITUTED,)
    assert d.tokens_a == (ta,) and d.tokens_b == (tb,)
    assert marked(a, d.span_a) == ta and marked(b, d.span_b) == tb


# ---- NEGATION_FLIP -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, neg_side, neg",
    [
        ("The policy does not apply to contractors", "The policy applies to contractors", "a", "not"),
        ("The API server caches responses", "The API server doesn't cache responses", "b", "doesn't"),
        ("Requests are sent without TLS", "Requests are sent with TLS", "a", "without"),
        (
            "No authentication is required for the health endpoint",
            "Authentication is required for the health endpoint",
            "a",
            "No",
        ),
        ("Up to 10 replicas can be configured.", "Up to 10 replicas cannot be configured.", "b", "cannot"),
    ],
)
def test_negation_flip(a, b, neg_side, neg):
    vc, d = only_diff(a, b)
    assert vc.patterns == (NEGATION_FLIP,)
    if neg_side == "a":
        assert d.tokens_a == (neg,) and d.tokens_b == ()
        assert marked(a, d.span_a) == neg
        assert d.span_b[0] == d.span_b[1]  # zero-width: where the negation is missing
    else:
        assert d.tokens_b == (neg,) and d.tokens_a == ()
        assert marked(b, d.span_b) == neg
        assert d.span_a[0] == d.span_a[1]


def test_negation_insertion_point_is_before_the_negated_word():
    a, b = "The policy does not apply to contractors", "The policy does apply to contractors"
    vc, d = only_diff(a, b)
    assert vc.patterns == (NEGATION_FLIP,)
    assert d.span_b == (b.index("apply"), b.index("apply"))


@pytest.mark.parametrize(
    "a, b, ta, tb",
    [
        ("TLS is enabled by default", "TLS is disabled by default", "enabled", "disabled"),
        ("Client certificates are required", "Client certificates are optional", "required", "optional"),
        ("Writes are synchronous in this mode", "Writes are asynchronous in this mode", "synchronous", "asynchronous"),
    ],
)
def test_antonym_flip(a, b, ta, tb):
    vc, d = only_diff(a, b)
    assert vc.patterns == (NEGATION_FLIP,)
    assert d.tokens_a == (ta,) and d.tokens_b == (tb,)
    assert marked(a, d.span_a) == ta and marked(b, d.span_b) == tb


# ---- several patterns at once -------------------------------------------------------------------
def test_several_patterns_sorted_and_distinct():
    a = "In 2024 NIST raised the limit to 100 requests"
    b = "In 2025 ISO raised the limit to 200 requests"
    vc = values_conflict(a, b)
    assert vc is not None
    assert vc.patterns == (DATE_SHIFTED, ENTITY_SUBSTITUTED, NUMBER_CHANGED)
    assert [marked(a, d.span_a) for d in vc.diffs] == ["2024", "NIST", "100"]
    assert [marked(b, d.span_b) for d in vc.diffs] == ["2025", "ISO", "200"]


# ---- paraphrases are not conflicts ----------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b",
    [
        ("The default client port of etcd is 2379", "etcd uses 2379 as its default client port"),
        (
            "etcd is a distributed key-value store used by Kubernetes.",
            "Kubernetes uses etcd, a distributed key-value store.",
        ),
        ("Raft is the consensus algorithm used by etcd", "etcd relies on the Raft consensus algorithm"),
        (
            "Pods are the smallest deployable units in Kubernetes",
            "In Kubernetes, the smallest deployable unit is the Pod",
        ),
        (
            "A Service exposes a set of Pods as a network service.",
            "Services expose groups of Pods as network services.",
        ),
        (
            "Encryption at rest is not enabled by default in etcd.",
            "By default, etcd does not enable encryption at rest.",
        ),
        ("Never expose port 2379 publicly", "Port 2379 should never be exposed publicly"),
        ("The service listens on port 8080 and uses TLS 1.3", "The service uses TLS 1.3 and listens on port 8080"),
        ("Latency increased by 15 percent", "Latency increased by 15%"),
        ("The new engine is twice as fast", "The new engine is 2x as fast"),
        ("Backups are kept for thirty days", "Backups are kept for 30 days"),
        ("The release shipped on 2024-03-05", "The release shipped on March 5, 2024"),
        ("The release was published in 2023 by the CNCF.", "The CNCF published the release in 2023."),
        ("It takes about 5 minutes to converge", "Convergence takes roughly five minutes"),
        ("The user base grew to 5 million", "The user base grew to 5,000,000"),
    ],
)
def test_paraphrase_is_not_a_conflict(a, b):
    assert values_conflict(a, b) is None
    assert values_conflict(b, a) is None


@pytest.mark.parametrize(
    "a, b",
    [
        # one side adds information: a value present on one side only is not a changed value
        ("etcd listens on 2379", "etcd listens on 2379 and on 2380 for peer traffic"),
        ("X is supported", "X is supported but not recommended for production"),
        # a year added on one side is not paired with a version number on the other
        ("Kubernetes 1.29 supports up to 5000 nodes", "Kubernetes supports up to 5000 nodes per cluster since 2019"),
        # common words differ: never a conflict
        ("The scheduler assigns pods to nodes", "The scheduler places pods onto nodes"),
        ("etcd listens on port 2379", "etcd uses port 2379"),
    ],
)
def test_added_information_or_common_words_are_not_conflicts(a, b):
    assert values_conflict(a, b) is None


def test_identical_and_empty_texts():
    assert values_conflict("etcd listens on 2379", "etcd listens on 2379") is None
    assert values_conflict("", "etcd listens on 2379") is None
    assert values_conflict("...", "!!!") is None


def test_tokenizer_spans_cover_their_text():
    text = "On 2024-03-05, etcd v3.5 moved 15% of $4.2M to 3x the 2,379 nodes; it isn't /etc/x.conf."
    for t in tokenize(text):
        assert 0 <= t.start < t.end <= len(text)
        assert text[t.start : t.end] == t.text


NUM = st.integers(min_value=0, max_value=10_000_000)


@settings(max_examples=150, deadline=None)
@given(x=NUM, y=NUM)
def test_property_number_change_iff_values_differ(x, y):
    a = f"The service keeps {x} connections open"
    b = f"The service keeps {y} connections open"
    vc = values_conflict(a, b)
    if x == y:
        assert vc is None
    else:
        assert vc is not None and len(vc.diffs) == 1
        expected = DATE_SHIFTED if (1900 <= x <= 2099 and 1900 <= y <= 2099) else NUMBER_CHANGED
        assert vc.patterns == (expected,)
        assert marked(a, vc.diffs[0].span_a) == str(x) and marked(b, vc.diffs[0].span_b) == str(y)


WORDS = st.sampled_from(["the", "port", "etcd", "uses", "default", "client", "listens", "on", "its", "as", "a"])


@settings(max_examples=150, deadline=None)
@given(words=st.lists(WORDS, min_size=1, max_size=10), perm=st.randoms(use_true_random=False))
def test_property_reordering_common_words_is_never_a_conflict(words, perm):
    shuffled = list(words)
    perm.shuffle(shuffled)
    assert values_conflict(" ".join(words) + " 2379", "2379 " + " ".join(shuffled)) is None


@settings(max_examples=100, deadline=None)
@given(a=st.text(max_size=60), b=st.text(max_size=60))
def test_property_never_crashes_and_spans_are_in_range(a, b):
    vc = values_conflict(a, b)
    if vc is not None:
        assert vc.patterns == tuple(sorted(set(vc.patterns)))
        for d in vc.diffs:
            assert 0 <= d.span_a[0] <= d.span_a[1] <= len(a)
            assert 0 <= d.span_b[0] <= d.span_b[1] <= len(b)


def test_multi_word_name_is_one_substitution():
    a = "etcd is a graduated project of the Cloud Native Computing Foundation since 2018"
    b = "etcd is a graduated project of the Apache Software Foundation since 2018"
    vc, d = only_diff(a, b)
    assert vc.patterns == (ENTITY_SUBSTITUTED,)
    assert d.tokens_a == ("Cloud", "Native", "Computing") and d.tokens_b == ("Apache", "Software")
    assert marked(a, d.span_a) == "Cloud Native Computing" and marked(b, d.span_b) == "Apache Software"
