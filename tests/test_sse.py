"""The SSE decoder against the WHATWG event-stream rules (HTML §9.2.5-9.2.6, the wpt
``eventsource/`` vectors), each vector decoded whole, one byte at a time and split in two at
every offset: how the network cuts the bytes must never change the events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, pairwise, repeat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from callstream.reference import ServerSentEvent, SSEDecoder, SSELimitError

# --- helpers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoded:
    """What a user of the decoder sees after feeding a whole stream and closing it."""

    events: tuple[ServerSentEvent, ...]
    discarded: bool
    comments: int
    retry: int | None
    damaged: bool
    """Some invalid UTF-8 was replaced (the exact count depends on the pieces)."""
    invalid_utf8: int = field(compare=False)

    @property
    def data(self) -> list[str]:
        """The data of each event, in order."""
        return [event.data for event in self.events]


def splittings(raw: bytes) -> Iterator[list[bytes]]:
    """Whole, one byte at a time, and every two-way split."""
    yield [raw]
    yield [raw[i : i + 1] for i in range(len(raw))]
    for cut in range(1, len(raw)):
        yield [raw[:cut], raw[cut:]]


def split_at(raw: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``raw`` cut at ``cuts`` (repeated cuts give empty pieces, which must change nothing)."""
    bounds = [0, *sorted(cuts), len(raw)]
    return [raw[start:end] for start, end in pairwise(bounds)]


def feed_all(decoder: SSEDecoder, pieces: Iterable[bytes]) -> list[ServerSentEvent]:
    """Feed every piece; the events they completed."""
    events: list[ServerSentEvent] = []
    for piece in pieces:
        events += decoder.feed(piece)
    return events


def decode(pieces: Iterable[bytes], **limits: int) -> Decoded:
    """Feed ``pieces`` to a fresh decoder, close it, and report what came out."""
    decoder = SSEDecoder(**limits)
    events = feed_all(decoder, pieces)
    discarded = decoder.close()
    return Decoded(
        tuple(events),
        discarded,
        decoder.comments,
        decoder.retry,
        decoder.invalid_utf8 > 0,
        decoder.invalid_utf8,
    )


def decode_every_way(raw: bytes, **limits: int) -> Decoded:
    """Decode ``raw`` under every splitting; assert they all agree and return the outcome."""
    whole = decode([raw], **limits)
    for pieces in splittings(raw):
        outcome = decode(pieces, **limits)
        assert outcome == whole, f"pieces of {[len(p) for p in pieces]} bytes changed the outcome"
    return whole


def assert_limit_every_way(raw: bytes, passed_at: int, **limits: int) -> None:
    """Under every splitting, ``raw`` raises :class:`SSELimitError` from the very feed that
    carries stream byte ``passed_at - 1`` (where the limit is passed), with that feed's offset.
    """
    for pieces in splittings(raw):
        decoder = SSEDecoder(**limits)
        with pytest.raises(SSELimitError) as caught:
            feed_all(decoder, pieces)
        expected = next(end for end in accumulate(map(len, pieces)) if end >= passed_at)
        assert caught.value.offset == expected, f"pieces of {[len(p) for p in pieces]} bytes"


# --- line endings ---------------------------------------------------------------------------


class TestLineEndings:
    def test_lf_ends_lines(self) -> None:
        """LF ends a line and LF LF dispatches."""
        assert decode_every_way(b"data: a\n\ndata: b\n\n").data == ["a", "b"]

    def test_crlf_ends_lines(self) -> None:
        """CRLF ends a line and CRLF CRLF dispatches, with no stray CR in the data."""
        assert decode_every_way(b"data: a\r\n\r\ndata: b\r\n\r\n").data == ["a", "b"]

    def test_lone_cr_ends_lines(self) -> None:
        """A lone CR is a complete line ending: CR CR dispatches."""
        assert decode_every_way(b"data: a\r\rdata: b\r\r").data == ["a", "b"]

    def test_mixed_endings_in_one_stream(self) -> None:
        """Events ended by CR CR, LF LF and CRLF CRLF in one stream all dispatch."""
        raw = b"data: a\r\rdata: b\n\ndata: c\r\n\r\n"
        assert decode_every_way(raw).data == ["a", "b", "c"]

    def test_newline_fest(self) -> None:
        """wpt "newline fest": CRLF, LF, CRLF then a lone CR make one event of three lines."""
        assert decode_every_way(b"data:test\r\ndata\ndata:test\r\n\r").data == ["test\n\ntest"]

    def test_lf_then_cr_is_two_line_endings(self) -> None:
        """LF followed by CR is not a pair: the CR is a blank line that dispatches."""
        assert decode_every_way(b"data: a\n\rdata: b\n\n").data == ["a", "b"]

    def test_crlf_split_across_pieces_is_one_line_ending(self) -> None:
        """A CR ending one piece and the LF starting the next end one line, not two."""
        pieces = [b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]
        assert decode(pieces).data == ["a\nb"]
        assert decode_every_way(b"data: a\r\ndata: b\r\n\r\n").data == ["a\nb"]

    def test_crlf_split_by_an_empty_piece_is_one_line_ending(self) -> None:
        """An empty feed between the CR and the LF of a CRLF does not make them two endings."""
        assert decode([b"data: a\r", b"", b"\ndata: b\r\n\r\n"]).data == ["a\nb"]

    def test_cr_at_a_piece_end_followed_by_cr_is_two_line_endings(self) -> None:
        """A CR ending one piece and a CR starting the next are two endings: a blank line."""
        assert decode([b"data: a\r", b"\rdata: b\r", b"\r"]).data == ["a", "b"]

    def test_blank_lines_alone_dispatch_nothing(self) -> None:
        """Blank lines with no data before them dispatch no event."""
        outcome = decode_every_way(b"\n\r\n\r\n\r")
        assert outcome.events == ()
        assert not outcome.discarded

    def test_other_unicode_line_breaks_do_not_end_lines(self) -> None:
        """NEL, VT, FS and U+2028 are data, not line endings (only CR and LF are)."""
        raw = "data: a\x85b\x0bc\x1cd\u2028e\n\n".encode()
        assert decode_every_way(raw).data == ["a\x85b\x0bc\x1cd\u2028e"]


# --- byte order mark ------------------------------------------------------------------------


class TestByteOrderMark:
    def test_leading_bom_is_stripped(self) -> None:
        """A BOM at stream offset 0 is dropped, so the first ``data:`` line still counts."""
        assert decode_every_way(b"\xef\xbb\xbfdata: a\n\n").data == ["a"]

    def test_bom_arriving_one_byte_at_a_time_is_stripped(self) -> None:
        """The three BOM bytes fed as three pieces are still one BOM, stripped."""
        pieces = [b"\xef", b"\xbb", b"\xbf", b"data: a\n\n"]
        outcome = decode(pieces)
        assert outcome.data == ["a"]
        assert not outcome.damaged

    def test_second_leading_bom_is_not_stripped(self) -> None:
        """wpt "Double BOM": only one BOM is stripped; the second makes the field name
        "\\ufeffdata", so the first event is lost and later ones arrive.
        """
        raw = b"\xef\xbb\xbf\xef\xbb\xbfdata: lost\n\ndata: kept\n\n"
        assert decode_every_way(raw).data == ["kept"]

    def test_bom_before_a_later_event_is_not_stripped(self) -> None:
        """A BOM that is not at offset 0 is ordinary text: the event it starts is lost."""
        raw = b"data: a\n\n\xef\xbb\xbfdata: lost\n\n"
        assert decode_every_way(raw).data == ["a"]

    def test_bom_inside_data_is_kept(self) -> None:
        """A U+FEFF inside a value is data, not a BOM."""
        assert decode_every_way("data: a\ufeffb\n\n".encode()).data == ["a\ufeffb"]

    def test_stream_of_only_a_bom_is_empty(self) -> None:
        """A stream that is just a BOM yields nothing and leaves nothing pending."""
        outcome = decode_every_way(b"\xef\xbb\xbf")
        assert outcome.events == ()
        assert not outcome.discarded


# --- comments -------------------------------------------------------------------------------


class TestComments:
    def test_comment_lines_are_ignored_and_counted(self) -> None:
        """Keep-alive comments dispatch nothing and are counted in ``comments``."""
        outcome = decode_every_way(b": ping\n\n: keep-alive\n\n:\n\n")
        assert outcome.events == ()
        assert outcome.comments == 3

    def test_comments_inside_an_event_do_not_break_its_data(self) -> None:
        """Comments between ``data`` lines are skipped; the lines around them still join."""
        outcome = decode_every_way(b"data: a\n: OPENROUTER PROCESSING\ndata: b\n\n")
        assert outcome.data == ["a\nb"]
        assert outcome.comments == 1

    def test_comment_fest(self) -> None:
        """wpt "comment fest": comments with NUL, ending in CR, 2 KiB long, or looking like
        ``:data:fail`` are all ignored, and the data lines around them join.
        """
        long = b"x" * 2049
        raw = (
            b"data:1\r:\x00\n:\r\ndata:2\n:" + long + b"\rdata:3\n:data:fail\r:" + long + b"\n"
            b"data:4\n\n"
        )
        outcome = decode_every_way(raw)
        assert outcome.data == ["1\n2\n3\n4"]
        assert outcome.comments == 5


# --- the data field -------------------------------------------------------------------------


class TestDataField:
    @pytest.mark.parametrize(
        ("line", "data"),
        [
            (b"data:x", "x"),
            (b"data: x", "x"),
            (b"data:  x", " x"),
            (b"data:\tx", "\tx"),
            (b"data: \tx", "\tx"),
            (b"data: x ", "x "),
            (b"data: ", ""),
        ],
        ids=["no-space", "one-space", "two-spaces", "tab", "space-tab", "trailing-space", "empty"],
    )
    def test_exactly_one_leading_space_is_removed(self, line: bytes, data: str) -> None:
        """One U+0020 after the colon is dropped; a second space, a tab or trailing spaces stay."""
        assert decode_every_way(line + b"\n\n").data == [data]

    def test_leading_space_vector(self) -> None:
        """wpt "leading space": tab kept, ``data: `` is an empty line, CR works as an ending."""
        assert decode_every_way(b"data:\ttest\rdata: \ndata:test\n\n").data == ["\ttest\n\ntest"]

    def test_value_is_split_at_the_first_colon_only(self) -> None:
        """Colons after the first are part of the value."""
        assert decode_every_way(b"data: a:b: c\ndata::x\n\n").data == ["a:b: c\n:x"]

    def test_bare_data_line_contributes_an_empty_line(self) -> None:
        """A ``data`` line without a colon appends an empty line: two of them give "\\n"."""
        assert decode_every_way(b"data\ndata\n\n").data == ["\n"]

    def test_empty_data_then_blank_line_dispatches_empty_string(self) -> None:
        """``data:`` then a blank line dispatches an event whose data is "", not nothing."""
        assert decode_every_way(b"data:\n\ndata: b\n\n").data == ["", "b"]

    def test_multiple_data_lines_are_joined_with_lf(self) -> None:
        """Data lines are joined with LF and the result has no trailing LF."""
        assert decode_every_way(b"data: a\ndata: b\ndata: c\n\n").data == ["a\nb\nc"]

    def test_only_one_trailing_lf_is_stripped(self) -> None:
        """A final empty ``data:`` line leaves a trailing LF: only the buffer's last LF goes."""
        assert decode_every_way(b"data: a\ndata:\n\n").data == ["a\n"]

    def test_nul_inside_data_is_preserved(self) -> None:
        """wpt "null character in response": NUL is ordinary data."""
        assert decode_every_way(b"data: a\x00b\n\n").data == ["a\x00b"]

    def test_field_parsing_vector(self) -> None:
        """wpt "field parsing": NUL in data kept, two spaces keep one, ``Data``, ``data\\0``,
        ``\\0data``, ``da-ta``, ``data_5`` and `` data`` are unknown fields, ``data:`` is empty.
        """
        raw = (
            b"data:\x00\ndata:  2\rData:1\ndata\x00:2\ndata:1\r\x00data:4\nda-ta:3\rdata_5\n"
            b"data:3\rdata:\r\n data:32\ndata:4\n\n"
        )
        assert decode_every_way(raw).data == ["\x00\n 2\n1\n3\n\n4"]


# --- field names ----------------------------------------------------------------------------


class TestFieldNames:
    @pytest.mark.parametrize("name", [b"Data", b"DATA", b" data", b"data ", b"\xef\xbb\xbfdata"])
    def test_field_names_match_exactly(self, name: bytes) -> None:
        """Field names are case-sensitive and never trimmed: a near-miss ``data`` is ignored."""
        outcome = decode_every_way(b"data: first\n\n" + name + b": x\n\n")
        assert outcome.data == ["first"]

    def test_event_field_name_is_case_sensitive(self) -> None:
        """``Event:`` does not set the type."""
        outcome = decode_every_way(b"Event: add\ndata: x\n\n")
        assert [e.event for e in outcome.events] == ["message"]

    def test_unknown_fields_and_free_text_are_ignored(self) -> None:
        """wpt "unknown fields and parsing fun": unknown fields and lines of text are skipped
        without disturbing the event around them.
        """
        raw = b"foo: bar\ndata: a\nsome random gibberish\nx:y:z\ndata: b\n\n"
        assert decode_every_way(raw).data == ["a\nb"]


# --- the event field ------------------------------------------------------------------------


class TestEventType:
    def test_event_field_sets_the_type(self) -> None:
        """``event: add`` dispatches under ``add``; without it the type is ``message``."""
        outcome = decode_every_way(b"event: add\ndata: 1\n\ndata: 2\n\n")
        assert [(e.event, e.data) for e in outcome.events] == [("add", "1"), ("message", "2")]

    @pytest.mark.parametrize("line", [b"event:", b"event: ", b"event"])
    def test_empty_event_type_falls_back_to_message(self, line: bytes) -> None:
        """An empty event type dispatches as ``message``."""
        outcome = decode_every_way(line + b"\ndata: x\n\n")
        assert [e.event for e in outcome.events] == ["message"]

    def test_last_event_field_of_a_block_wins(self) -> None:
        """A later ``event`` line in the same block replaces the earlier one."""
        outcome = decode_every_way(b"event: a\nevent: b\ndata: x\n\n")
        assert [e.event for e in outcome.events] == ["b"]

    def test_event_only_block_dispatches_nothing(self) -> None:
        """A block with ``event`` but no ``data`` fires nothing, and its type does not leak
        into the next event.
        """
        outcome = decode_every_way(b"event: ping\n\ndata: x\n\n")
        assert [(e.event, e.data) for e in outcome.events] == [("message", "x")]

    def test_non_ascii_event_type(self) -> None:
        """Event types are decoded as UTF-8 like everything else."""
        outcome = decode_every_way("event: 天気\ndata: x\n\n".encode())
        assert [e.event for e in outcome.events] == ["天気"]


# --- the id field ---------------------------------------------------------------------------


class TestLastEventId:
    def test_id_persists_changes_and_resets(self) -> None:
        """The id carries over to later events until a new ``id`` replaces it; a bare ``id``
        resets it to "".
        """
        raw = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\nid:\ndata: e\n\n"
        outcome = decode_every_way(raw)
        assert [(e.data, e.id) for e in outcome.events] == [
            ("a", "1"),
            ("b", "1"),
            ("c", "2"),
            ("d", ""),
            ("e", ""),
        ]

    def test_id_from_a_block_without_data_applies_to_later_events(self) -> None:
        """An ``id`` in a block that dispatches nothing still sets the last event id."""
        outcome = decode_every_way(b"id: 7\n\ndata: a\n\n")
        assert [e.id for e in outcome.events] == ["7"]

    def test_id_containing_nul_is_ignored(self) -> None:
        """An ``id`` whose value contains NUL is ignored; the previous id stays in force."""
        outcome = decode_every_way(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
        assert [e.id for e in outcome.events] == ["1", "1"]

    def test_id_keeps_the_second_leading_space(self) -> None:
        """The one-space rule applies to ``id`` too: ``id:  x`` gives " x"."""
        outcome = decode_every_way(b"id:  x\ndata: a\n\n")
        assert [e.id for e in outcome.events] == [" x"]


# --- the retry field ------------------------------------------------------------------------


class TestRetry:
    @pytest.mark.parametrize(
        ("line", "retry"),
        [(b"retry: 02000", 2000), (b"retry:1000", 1000), (b"retry: 0", 0)],
        ids=["leading-zeros-are-decimal", "no-space", "zero"],
    )
    def test_retry_of_ascii_digits_sets_the_reconnection_time(
        self, line: bytes, retry: int
    ) -> None:
        """``retry`` with only ASCII digits is read in base 10 (``02000`` is 2000, not octal)."""
        outcome = decode_every_way(line + b"\ndata: a\n\n")
        assert outcome.retry == retry
        assert [e.retry for e in outcome.events] == [retry]

    def test_retry_is_none_until_set(self) -> None:
        """Events of a stream without ``retry`` carry no reconnection time."""
        outcome = decode_every_way(b"data: a\n\n")
        assert outcome.retry is None
        assert [e.retry for e in outcome.events] == [None]

    @pytest.mark.parametrize(
        "line",
        [
            b"retry: 1000x",
            b"retry: bogus",
            b"retry",
            b"retry:",
            b"retry: -5",
            b"retry: 1.5",
            b"retry: 1 000",
            b"retry:  1000",
            "retry: ١٢٣".encode(),
            "retry: ²".encode(),
        ],
        ids=[
            "trailing-letter",
            "word",
            "bare",
            "empty",
            "negative",
            "decimal-point",
            "inner-space",
            "two-leading-spaces",
            "arabic-indic-digits",
            "superscript-two",
        ],
    )
    def test_bogus_retry_is_ignored(self, line: bytes) -> None:
        """A ``retry`` value that is not all ASCII digits is ignored and the stream goes on."""
        outcome = decode_every_way(b"retry: 500\n" + line + b"\ndata: a\n\n")
        assert outcome.retry == 500
        assert outcome.data == ["a"]


# --- end of stream --------------------------------------------------------------------------


class TestEndOfStream:
    @pytest.mark.parametrize(
        "raw",
        [b"data: a", b"data: a\n", b"data: a\r", b"data: a\r\n", b"data: a\ndata: b\n"],
        ids=["no-line-ending", "lf", "cr", "crlf", "two-lines"],
    )
    def test_unterminated_final_event_is_discarded(self, raw: bytes) -> None:
        """An event with no blank line after it is never dispatched; close() reports it."""
        outcome = decode_every_way(raw)
        assert outcome.events == ()
        assert outcome.discarded

    def test_complete_events_survive_a_discarded_tail(self) -> None:
        """Events completed before the truncated one are still delivered."""
        outcome = decode_every_way(b"data: a\n\ndata: b\n")
        assert outcome.data == ["a"]
        assert outcome.discarded

    @pytest.mark.parametrize(
        "raw", [b"", b"data: a\n\n", b"data: a\r\n\r\n", b"data: a\r\r"], ids=repr
    )
    def test_close_reports_nothing_when_nothing_is_pending(self, raw: bytes) -> None:
        """close() returns False when every event was dispatched."""
        assert not decode_every_way(raw).discarded


# --- UTF-8 ----------------------------------------------------------------------------------


class TestUtf8:
    @pytest.mark.parametrize("char", ["é", "€", "😀"], ids=["2-byte", "3-byte", "4-byte"])
    def test_multibyte_character_split_at_every_byte_is_reassembled(self, char: str) -> None:
        """A character whose bytes arrive in different pieces decodes whole, with no U+FFFD."""
        outcome = decode_every_way(f"data: {char}{char}\ndata:{char}\n\n".encode())
        assert outcome.data == [f"{char}{char}\n{char}"]
        assert not outcome.damaged

    def test_mixed_width_characters_are_reassembled(self) -> None:
        """1-, 2-, 3- and 4-byte characters side by side survive every split."""
        outcome = decode_every_way("data: aé€😀天\n\n".encode())
        assert outcome.data == ["aé€😀天"]
        assert not outcome.damaged

    @pytest.mark.parametrize(
        ("bad", "text"),
        [
            (b"\xff", "\ufffd"),
            (b"\x80", "\ufffd"),
            (b"\xc0\xaf", "\ufffd\ufffd"),
            (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),
            (b"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"),
            (b"\xe2\x82", "\ufffd"),
        ],
        ids=[
            "invalid-byte",
            "lone-continuation",
            "overlong",
            "surrogate",
            "above-max",
            "truncated",
        ],
    )
    def test_invalid_utf8_is_replaced_and_counted(self, bad: bytes, text: str) -> None:
        """Invalid UTF-8 becomes U+FFFD (one per maximal subpart, as the Encoding standard
        says) and is counted in ``invalid_utf8``.
        """
        outcome = decode_every_way(b"data: <" + bad + b">\n\n")
        assert outcome.data == [f"<{text}>"]
        assert outcome.damaged

    def test_one_invalid_byte_is_counted_once_however_split(self) -> None:
        """A single bad byte counts once in ``invalid_utf8`` under every splitting."""
        raw = b"data: a\xffb\n\n"
        assert {decode(pieces).invalid_utf8 for pieces in splittings(raw)} == {1}

    def test_truncated_sequence_does_not_swallow_the_line_ending(self) -> None:
        """A cut-off multi-byte sequence before LF is replaced; the LF still ends the line."""
        assert decode_every_way(b"data: \xe2\n\ndata: b\n\n").data == ["\ufffd", "b"]

    def test_incomplete_sequence_at_end_of_stream_is_reported(self) -> None:
        """Bytes of an unfinished character left at EOF count as invalid UTF-8 and as a
        discarded tail; the events before them are intact.
        """
        outcome = decode_every_way(b"data: a\n\n\xf0\x9f\x98")
        assert outcome.data == ["a"]
        assert outcome.discarded
        assert outcome.invalid_utf8 == 1

    def test_charset_is_always_utf8(self) -> None:
        """Bytes that would be "Ã©" in windows-1252 decode as UTF-8 "é"."""
        assert decode_every_way(b"data: \xc3\xa9\n\n").data == ["é"]


# --- limits ---------------------------------------------------------------------------------


class TestLimits:
    def test_line_at_the_limit_is_accepted(self) -> None:
        """A line of exactly ``max_line_length`` characters is decoded."""
        outcome = decode_every_way(b"data: abcd\n\n", max_line_length=10)
        assert outcome.data == ["abcd"]

    def test_line_longer_than_the_limit_raises(self) -> None:
        """A line of ``max_line_length + 1`` characters raises SSELimitError, from the feed
        that brings its 11th character, whatever the splitting.
        """
        assert_limit_every_way(b"data: abcde\n\n", passed_at=11, max_line_length=10)

    def test_long_comment_line_raises(self) -> None:
        """Comment lines are bounded too, so keep-alives cannot grow memory."""
        assert_limit_every_way(b": " + b"x" * 20 + b"\n", passed_at=11, max_line_length=10)

    def test_endless_line_fed_a_byte_at_a_time_raises_at_once(self) -> None:
        """A line that never ends, fed one byte at a time, raises as soon as it passes the limit
        (byte 65 for a limit of 64), not when the line ends: memory stays bounded.
        """
        decoder = SSEDecoder(max_line_length=64)
        with pytest.raises(SSELimitError) as caught:
            feed_all(decoder, repeat(b"x", 10_000))
        assert caught.value.offset == 65

    def test_events_completed_before_the_limit_travel_with_the_error(self) -> None:
        """Events the same feed completed before the over-long line are not lost: they ride on
        the error as ``events``, in order."""
        decoder = SSEDecoder(max_line_length=10)
        with pytest.raises(SSELimitError) as caught:
            decoder.feed(b"data: a\n\ndata: b\n\ndata: far too long\n\n")
        assert [event.data for event in caught.value.events] == ["a", "b"]

    def test_event_data_past_the_limit_raises(self) -> None:
        """Data lines each under the line limit but together past ``max_event_size`` raise
        SSELimitError at the line that passes it.
        """
        raw = b"data: 01234\ndata: 56789\n\n"  # data "01234\n56789": 11 characters
        assert_limit_every_way(raw, passed_at=24, max_event_size=10)

    def test_event_data_of_exactly_the_limit_is_delivered(self) -> None:
        """An event whose data is exactly ``max_event_size`` characters does not pass it."""
        outcome = decode_every_way(b"data: 0123456789\n\n", max_event_size=10)
        assert outcome.data == ["0123456789"]

    def test_endless_event_raises_at_once(self) -> None:
        """An event that never ends raises as soon as its data passes the limit: ten lines of
        ten characters (109 with the joining LFs) pass 100, at stream byte 170.
        """
        decoder = SSEDecoder(max_event_size=100)
        with pytest.raises(SSELimitError) as caught:
            feed_all(decoder, repeat(b"data: 0123456789\n", 10_000))
        assert caught.value.offset == 170

    def test_event_limit_applies_per_event(self) -> None:
        """Many events each under ``max_event_size`` pass, however much the stream carries."""
        outcome = decode_every_way(b"data: 0123456789\n\n" * 5, max_event_size=16)
        assert outcome.data == ["0123456789"] * 5


# --- properties -----------------------------------------------------------------------------

_LINE_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
_CHARS = st.one_of(
    st.characters(codec="utf-8", exclude_characters="\r\n"),
    st.sampled_from("é€😀天\x00\ufeff\x85\u2028 :"),
)
# Joined by hand: st.text() would merge the alphabet and rarely draw the listed characters.
_TEXT = st.lists(_CHARS, max_size=12).map("".join)
# Field names, line endings, a BOM and pieces of multi-byte characters, so that random bytes
# often look like a stream.
_WIRE_TOKENS = [
    *(b"data:", b"data: ", b"event:", b"id:", b"retry:", b":", b" ", b"\x00"),
    *(b"\r", b"\n", b"\r\n", b"\xef\xbb\xbf", b"\xf0\x9f", b"\x98\x80", b"\xc3"),
]
_WIRE_BYTES = st.one_of(
    st.binary(),
    st.lists(
        st.one_of(
            st.binary(max_size=6),
            st.sampled_from(_WIRE_TOKENS),
        ),
        max_size=40,
    ).map(b"".join),
)


def _cuts(size: int) -> st.SearchStrategy[list[int]]:
    """Where to cut ``size`` bytes: at random offsets, or at every byte."""
    return st.lists(st.integers(0, size), max_size=16) | st.just(list(range(1, size)))


@dataclass(frozen=True)
class EncodedStream:
    """An event stream written by the test, and the events it must decode to."""

    raw: bytes
    events: tuple[ServerSentEvent, ...]
    comments: int


@st.composite
def encoded_streams(draw: st.DrawFn) -> EncodedStream:
    """Random blocks of ``event``/``id``/``retry``/``data`` fields in random order, written
    with a random line ending per line, random comments and an optional BOM.
    """
    out = ["\ufeff" if draw(st.booleans()) else ""]
    previous_ending = ""
    comments = 0

    def line(text: str) -> None:
        nonlocal previous_ending
        ending = draw(_LINE_ENDINGS)
        if not text and previous_ending == "\r" and ending == "\n":
            ending = "\r"  # CR then an LF-ended blank line would read as one CRLF
        out.append(text + ending)
        previous_ending = ending

    def field_line(name: str, value: str) -> str:
        if not value and draw(st.booleans()):
            return name
        spaced = value.startswith(" ") or draw(st.booleans())
        return f"{name}: {value}" if spaced else f"{name}:{value}"

    events: list[ServerSentEvent] = []
    last_id = ""
    retry: int | None = None
    for _ in range(draw(st.integers(0, 4))):
        fields = [("data", value) for value in draw(st.lists(_TEXT, max_size=4))]
        event_type = draw(st.none() | _TEXT)
        if event_type is not None:
            fields.append(("event", event_type))
        event_id = draw(st.none() | _TEXT)
        if event_id is not None:
            fields.append(("id", event_id))
            if "\x00" not in event_id:
                last_id = event_id
        new_retry = draw(st.none() | st.integers(0, 10**9))
        if new_retry is not None:
            fields.append(("retry", str(new_retry)))
            retry = new_retry
        fields = draw(st.permutations(fields))
        for name, value in fields:
            comment = draw(st.none() | _TEXT)
            if comment is not None:
                line(":" + comment)
                comments += 1
            line(field_line(name, value))
        line("")
        data = [value for name, value in fields if name == "data"]
        if data:
            events.append(ServerSentEvent("\n".join(data), event_type or "message", last_id, retry))
    return EncodedStream("".join(out).encode(), tuple(events), comments)


class TestProperties:
    @given(encoded_streams(), st.data())
    def test_any_split_decodes_to_the_encoded_events(
        self, stream: EncodedStream, data: st.DataObject
    ) -> None:
        """Random events with random endings, comments and BOM decode to exactly what was
        encoded, whole and under any random split (empty pieces included).
        """
        pieces = split_at(stream.raw, data.draw(_cuts(len(stream.raw))))
        for outcome in (decode([stream.raw]), decode(pieces)):
            assert outcome.events == stream.events
            assert outcome.comments == stream.comments
            assert not outcome.discarded
            assert not outcome.damaged

    @given(_WIRE_BYTES, st.data())
    def test_arbitrary_bytes_never_raise_with_default_limits(
        self, raw: bytes, data: st.DataObject
    ) -> None:
        """Any bytes in any pieces decode without an exception; close() returns a bool."""
        decoder = SSEDecoder()
        for event in feed_all(decoder, split_at(raw, data.draw(_cuts(len(raw))))):
            assert isinstance(event, ServerSentEvent)
        assert isinstance(decoder.close(), bool)
        assert decoder.bytes_seen == len(raw)

    @given(_WIRE_BYTES, st.data())
    def test_arbitrary_bytes_raise_only_limit_errors(self, raw: bytes, data: st.DataObject) -> None:
        """Under tiny limits any bytes either decode or raise SSELimitError (with an offset
        inside the stream), and which of the two does not depend on the split.
        """

        def limit_offset(pieces: list[bytes]) -> int | None:
            decoder = SSEDecoder(max_line_length=6, max_event_size=12)
            try:
                feed_all(decoder, pieces)
            except SSELimitError as error:
                return error.offset
            assert isinstance(decoder.close(), bool)
            return None

        offset = limit_offset(split_at(raw, data.draw(_cuts(len(raw)))))
        assert offset is None or 0 < offset <= len(raw)
        assert (offset is None) == (limit_offset([raw]) is None)

    @given(_WIRE_BYTES, st.data())
    def test_decoding_arbitrary_bytes_does_not_depend_on_the_split(
        self, raw: bytes, data: st.DataObject
    ) -> None:
        """Even for garbage, the events, the discarded tail, comments, retry and whether UTF-8
        was damaged are the same whole and in random pieces.
        """
        assert decode(split_at(raw, data.draw(_cuts(len(raw))))) == decode([raw])
