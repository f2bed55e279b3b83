"""The documented rules of the value-conflict detector, one focused case each
(docs/reference/pipeline.md §4, SPEC-005 §5.3; docs/decisions/detector.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.records import ValueConflict
from crp_core.stages.contradictions import lexicon as detector
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    tokenize,
    values_conflict,
)


def patterns(a: str, b: str) -> tuple[str, ...] | None:
    vc = values_conflict(a, b)
    return vc.patterns if vc else None


# ---- the reported defects: false positives ---------------------------------------------------
@pytest.mark.parametrize(
    "a, b",
    [
        # a capitalised first word is not a name
        ("Encryption at rest is enabled by default.", "Data at rest is encrypted by default."),
        (
            "Stale DNS entries are flushed from the cache after 30 seconds.",
            "Services flush stale DNS entries from their cache after 30 seconds.",
        ),
        # one value in another form
        ("The request timeout is 30 seconds.", "The request timeout is 30 s."),
        # numbers of different attributes
        ("The etcd client port is 2379.", "The etcd peer port is 2380."),
        (
            "The API allows 100 requests per minute for the free tier.",
            "The API allows 1,000 requests per minute for the enterprise tier.",
        ),
        ("Backups are retained for 35 days.", "Snapshots are taken every 24 hours."),
        ("etcd 3.4 was released in 2019.", "etcd listens on port 2379 for client traffic."),
    ],
)
def test_reported_false_positives_are_gone(a: str, b: str) -> None:
    assert values_conflict(a, b) is None
    assert values_conflict(b, a) is None


# ---- the reported defects: misses ------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "etcd uses client port 2379 and peer port 2380.",
            "etcd uses client port 2380 and peer port 2379.",
            NUMBER_CHANGED,
        ),
        (
            "The client port is 2379, the peer port is 2380.",
            "The client port is 2380, the peer port is 2379.",
            NUMBER_CHANGED,
        ),
        ("Kubernetes stores cluster state in etcd.", "Kubernetes stores cluster state in consul.", ENTITY_SUBSTITUTED),
        ("The kubelet talks to containerd.", "The kubelet talks to docker.", ENTITY_SUBSTITUTED),
        ("Compression is on by default.", "Compression is off by default.", NEGATION_FLIP),
        ("Port 2379 is open to the control plane.", "Port 2379 is closed to the control plane.", NEGATION_FLIP),
    ],
)
def test_reported_misses_are_found(a: str, b: str, expected: str) -> None:
    assert patterns(a, b) == (expected,)


def test_a_swap_marks_both_values() -> None:
    a, b = "etcd uses client port 2379 and peer port 2380.", "etcd uses client port 2380 and peer port 2379."
    vc = values_conflict(a, b)
    assert vc is not None and len(vc.diffs) == 2
    assert [(a[d.span_a[0] : d.span_a[1]], b[d.span_b[0] : d.span_b[1]]) for d in vc.diffs] == [
        ("2379", "2380"),
        ("2380", "2379"),
    ]


def test_a_list_in_another_order_is_no_swap() -> None:
    assert (
        values_conflict(
            "The service is available in eu-west-1 and us-east-1.",
            "The service is available in us-east-1 and eu-west-1.",
        )
        is None
    )


# ---- spans, order, records -------------------------------------------------------------------
def test_spans_refer_to_their_own_text() -> None:
    a = "The default port of Redis is 6379."
    b = "By default, on all of our hosts, the Redis port is 6380."
    for x, y in ((a, b), (b, a)):
        vc = values_conflict(x, y)
        assert vc is not None and vc.patterns == (NUMBER_CHANGED,)
        d = vc.diffs[0]
        assert x[d.span_a[0] : d.span_a[1]] == d.tokens_a[0]
        assert y[d.span_b[0] : d.span_b[1]] == d.tokens_b[0]


def test_record_types_patterns_sorted_and_diffs_ordered() -> None:
    a = "In 2024 NIST raised the limit to 100 requests"
    b = "In 2025 ISO raised the limit to 200 requests"
    vc = values_conflict(a, b)
    assert isinstance(vc, ValueConflict)
    assert vc.patterns == tuple(sorted(set(vc.patterns))) == (DATE_SHIFTED, ENTITY_SUBSTITUTED, NUMBER_CHANGED)
    assert [d.span_a for d in vc.diffs] == sorted(d.span_a for d in vc.diffs)


def test_negation_span_is_zero_width_where_the_negation_is_missing() -> None:
    a, b = "The policy does not apply to contractors", "The policy applies to contractors"
    vc = values_conflict(a, b)
    assert vc is not None and vc.patterns == (NEGATION_FLIP,)
    d = vc.diffs[0]
    assert d.tokens_a == ("not",) and d.tokens_b == () and d.span_b == (b.index("applies"),) * 2


def test_memoised_and_pure() -> None:
    a, b = "Backups are kept for 30 days.", "Backups are kept for 90 days."
    first = values_conflict(a, b)
    assert values_conflict(a, b) is first
    assert values_conflict.cache_info().hits >= 1
    assert tokenize(a) is tokenize(a)


# ---- normalisation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x, y",
    [
        ("30 seconds", "30 s"),
        ("168 hours", "7 days"),
        ("72 hours", "three days"),
        ("15 minutes", "900 seconds"),
        ("0.1 s", "100 ms"),
        ("two weeks", "14 days"),
        ("one year", "12 months"),
        ("1 month", "30 days"),
        ("1.5 GB", "1536 MB"),
        ("1.5 GB", "1500 MB"),
        ("2 GiB", "2048 MiB"),
        ("20Gi", "20480Mi"),
        ("three", "3"),
        ("twenty-five", "25"),
        ("5 million", "5,000,000"),
        ("EUR 20 million", "€20,000,000"),
        ("15 percent", "15%"),
        ("twice as", "2x as"),
    ],
)
def test_one_value_in_two_forms(x: str, y: str) -> None:
    assert values_conflict(f"The configured limit is {x} here.", f"The configured limit is {y} here.") is None


@pytest.mark.parametrize(
    "x, y, expected",
    [
        ("30 seconds", "3 minutes", NUMBER_CHANGED),
        ("1.5 GB", "1600 MB", NUMBER_CHANGED),
        ("1 GiB", "1000 MiB", NUMBER_CHANGED),
        ("2 GiB", "2 TiB", MAGNITUDE_ALTERED),
        ("$4.2M", "$4.2B", MAGNITUDE_ALTERED),
        ("15%", "50%", MAGNITUDE_ALTERED),
        ("3x", "5x", MAGNITUDE_ALTERED),
    ],
)
def test_changed_values_across_units(x: str, y: str, expected: str) -> None:
    assert patterns(f"The configured limit is {x} here.", f"The configured limit is {y} here.") == (expected,)


@pytest.mark.parametrize(
    "x, y",
    [
        ("2025-06-30", "30 June 2025"),
        ("2025-06-30", "June 30, 2025"),
        ("14:00", "2 pm"),
        ("Q3 2025", "August 2025"),
        ("2026", "31 December 2026"),
    ],
)
def test_one_date_in_two_forms(x: str, y: str) -> None:
    assert values_conflict(f"The cut-over happens on {x}.", f"The cut-over happens on {y}.") is None


def test_rates_and_calendar_units() -> None:
    assert (
        values_conflict("The API allows 6,000 requests per minute.", "The API allows 100 requests per second.") is None
    )
    assert values_conflict("The Pro plan costs $49 per month.", "The Pro plan costs $588 per year.") is None
    assert patterns("The Pro plan costs $49 per month.", "The Pro plan costs $59 per month.") == (NUMBER_CHANGED,)
    assert values_conflict("Snapshots are taken daily.", "Snapshots are taken every 24 hours.") is None


def test_years_and_four_digit_numbers() -> None:
    assert patterns("Support ends in 2024.", "Support ends in 2025.") == (DATE_SHIFTED,)
    assert patterns("The default port is 2000", "The default port is 2379") == (NUMBER_CHANGED,)
    assert patterns("The client port is 2379.", "The client port is 4001.") == (NUMBER_CHANGED,)


def test_unitless_decimals_compare_as_written() -> None:
    assert patterns("The cluster runs Kubernetes 1.30.", "The cluster runs Kubernetes 1.3.") == (NUMBER_CHANGED,)


# ---- entities --------------------------------------------------------------------------------
def test_lexicon_is_data() -> None:
    assert detector.ENTITY_LEXICON["etcd"].any_case
    assert not detector.ENTITY_LEXICON["vault"].any_case  # "vault" the noun, "Vault" the product
    assert detector.ENTITY_LEXICON["postgresql"].canonical == "postgres"
    assert detector.POLARITY["disabled"].sign == -1 and detector.POLARITY["enabled"].sign == 1
    assert detector.UNITS["gib"].power == 3


@pytest.mark.parametrize(
    "a, b",
    [
        ("PostgreSQL is the primary datastore.", "Postgres is the primary datastore."),  # one name, two spellings
        ("The Lumen Payments API returns JSON.", "The Lumen API returns JSON."),  # a name and its shorter form
        (
            "Pods are the smallest deployable units in Kubernetes",
            "In Kubernetes, the smallest deployable unit is the Pod",
        ),
    ],
)
def test_same_name_is_no_substitution(a: str, b: str) -> None:
    assert values_conflict(a, b) is None


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "The bucket lives in the AWS region us-east-1",
            "The bucket lives in the AWS region eu-west-1",
            ("us-east-1",),
        ),
        ("The checkout API requires TLS1.2 or later.", "The checkout API requires TLS1.3 or later.", ("TLS1.2",)),
        ("Use etcd v3.5 with this release", "Use etcd v3.4 with this release", ("v3.5",)),
        (
            "etcd is a graduated project of the Cloud Native Computing Foundation",
            "etcd is a graduated project of the Apache Software Foundation",
            ("Cloud", "Native", "Computing"),
        ),
    ],
)
def test_identifiers_and_multi_word_names(a: str, b: str, expected: tuple[str, ...]) -> None:
    vc = values_conflict(a, b)
    assert vc is not None and vc.patterns == (ENTITY_SUBSTITUTED,) and vc.diffs[0].tokens_a == expected


def test_a_different_owner_is_a_different_statement() -> None:
    assert values_conflict("The kubelet listens on port 10250.", "The kube-proxy listens on port 10249.") is None
    assert values_conflict("Kafka's default port is 9092.", "ZooKeeper's default port is 2181.") is None
    # a copula makes the name the value; swapped owners are still a swap
    assert patterns("Stripe is our card processor.", "Adyen is our card processor.") == (ENTITY_SUBSTITUTED,)
    assert patterns(
        "Stripe handles card payments and Adyen handles SEPA debits.",
        "Adyen handles card payments and Stripe handles SEPA debits.",
    ) == (ENTITY_SUBSTITUTED,)


# ---- polarity and negation scope ------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b",
    [
        ("Client certificates are required.", "Client certificates are optional."),
        ("Logging is mandatory.", "Logging is optional."),
        ("Public buckets are allowed.", "Public buckets are forbidden."),
        ("The bucket is public.", "The bucket is private."),
        ("Writes are synchronous in this mode", "Writes are asynchronous in this mode"),
        ("Strict mode is on.", "Strict mode is off."),
        ("The GDPR does apply to such processing.", "The GDPR does not apply to such processing."),
        ("The queue holds at most 10,000 messages.", "The queue holds at least 10,000 messages."),
    ],
)
def test_flips(a: str, b: str) -> None:
    assert patterns(a, b) == (NEGATION_FLIP,)


@pytest.mark.parametrize(
    "a, b",
    [
        ("Encryption at rest is not enabled by default.", "Encryption at rest is disabled by default."),
        (
            "The policy applies not only to employees but also to contractors.",
            "The policy applies to employees and also to contractors.",
        ),
        ("Notify the authority no later than 72 hours after discovery.", "Notify the authority within 72 hours."),
        ("Data must not be kept longer than necessary.", "Data should be kept no longer than necessary."),
        ("Never expose port 2379 publicly", "Port 2379 should never be exposed publicly"),
        ("X is supported", "X is supported but not recommended for production"),
        ("Retries are not attempted for 4xx errors.", "Retries are attempted for 5xx errors, not for 4xx errors."),
        ("The public API allows 100 requests per minute.", "The private API allows 1000 requests per minute."),
    ],
)
def test_no_flips(a: str, b: str) -> None:
    assert values_conflict(a, b) is None


def test_inserted_qualifier_separates_values() -> None:
    assert values_conflict("Backups are kept for 30 days.", "Backups are kept for 90 days in the EU region.") is None
    assert patterns("Backups are kept for 30 days.", "Backups are retained for 90 days.") == (NUMBER_CHANGED,)


# ---- properties ------------------------------------------------------------------------------
SUBJECTS = st.sampled_from(
    [
        "The etcd client port",
        "Kafka retention",
        "The request timeout",
        "The free tier quota",
        "Backups",
        "The API",
        "Encryption at rest",
        "Data at rest",
        "The kubelet",
    ]
)
VERBS = st.sampled_from(
    [
        "is",
        "is not",
        "stays",
        "was set to",
        "is kept at",
        "is enabled with",
        "is disabled with",
        "listens on",
        "moved to",
        "runs on",
    ]
)
VALUES = st.sampled_from(
    [
        "2379",
        "2380",
        "30 seconds",
        "30 s",
        "3 minutes",
        "7 days",
        "168 hours",
        "15%",
        "3x",
        "2024",
        "2025",
        "30 June 2025",
        "2025-06-30",
        "etcd",
        "consul",
        "eu-west-1",
        "v3.5",
        "EUR 35 million",
        "three",
        "3",
    ]
)
TAILS = st.sampled_from(
    [
        "",
        " by default",
        " for the free tier",
        " in production",
        ", and the peer port is 2380",
        " unless configured otherwise",
    ]
)
SENTENCES = st.builds(lambda s, v, x, t: f"{s} {v} {x}{t}.", SUBJECTS, VERBS, VALUES, TAILS)


@settings(max_examples=300, deadline=None)
@given(a=SENTENCES, b=SENTENCES)
def test_property_symmetric(a: str, b: str) -> None:
    ab, ba = values_conflict(a, b), values_conflict(b, a)
    assert (ab is None) == (ba is None)
    if ab is not None and ba is not None:
        assert ab.patterns == ba.patterns
        assert sorted((d.pattern, d.span_a, d.span_b) for d in ab.diffs) == sorted(
            (d.pattern, d.span_b, d.span_a) for d in ba.diffs
        )
        for d in ab.diffs:
            assert 0 <= d.span_a[0] <= d.span_a[1] <= len(a) and 0 <= d.span_b[0] <= d.span_b[1] <= len(b)


@settings(max_examples=200, deadline=None)
@given(a=st.text(max_size=80), b=st.text(max_size=80))
def test_property_never_crashes_on_any_text(a: str, b: str) -> None:
    vc = values_conflict(a, b)
    if vc is not None:
        assert vc.patterns == tuple(sorted(set(vc.patterns)))
    for t in tokenize(a):
        assert a[t.start : t.end] == t.text


def test_one_changed_name_is_one_diff_however_it_was_read():
    """A two-word name read word by word and as a whole gave two diffs of the same span (the CLI printed
    'Wayne Systems -> Tyrell Cloud' twice): one diff per pattern and pair of spans, the name whole."""
    from crp_core.stages.contradictions.values import values_conflict

    a = "The backup agent memory limit is 512 MiB, as documented by Wayne Systems for cluster c464."
    b = "The backup agent memory limit is 512 MiB, as documented by Tyrell Cloud for cluster c464."
    vc = values_conflict(a, b)
    assert vc is not None and vc.patterns == ("ENTITY_SUBSTITUTED",)
    assert [(d.tokens_a, d.tokens_b) for d in vc.diffs] == [(("Wayne Systems",), ("Tyrell Cloud",))]
    assert (a[slice(*vc.diffs[0].span_a)], b[slice(*vc.diffs[0].span_b)]) == ("Wayne Systems", "Tyrell Cloud")
