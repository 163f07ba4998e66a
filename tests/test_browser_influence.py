"""In the browser: the picture of influence draws the right items and arrows for a known conversation (in
the influence panel and in the Forget preview), and after a deletion the placeholder where a reply was
answers the question again; a conversation the deletion emptied leaves the list.

Screenshots are saved under test-artifacts/ (influence-*.png)."""

from __future__ import annotations

import re

import pytest

from chat.models import Message
from memory.graph import context_ids
from memory.models import Edge
from provenance.selectors import node_influence
from tests import browser as tb

pytestmark = pytest.mark.browser


def ids_of(locator) -> set[int]:
    return {int(i) for i in locator.evaluate_all("ns => ns.map(n => n.dataset.id)")}


def picture(figure) -> tuple[set[int], set[tuple[int, int]]]:
    """The item ids and the (src, dst) arrows a drawn picture shows."""
    nodes = ids_of(figure.locator(".graph-node"))
    arrows = figure.locator(".graph-edge").evaluate_all("es => es.map(e => [e.dataset.src, e.dataset.dst])")
    return nodes, {(int(s), int(d)) for s, d in arrows}


def edges_among(ids: set[int]) -> set[tuple[int, int]]:
    return set(Edge.objects.filter(src_id__in=ids, dst_id__in=ids).values_list("src_id", "dst_id"))


def test_influence_picture_placeholder_and_answer_again(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "influence"):
        tb.sign_up(page, base, "pictures")
        first_url = tb.new_conversation(page, base)
        lisbon = tb.say(page, "I live in Lisbon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        lisbon_id = int(lisbon.get_attribute("data-id"))
        tb.new_conversation(page, base, previous_url=first_url)
        question = tb.say(page, "Where do I live?", 1)
        question_id = int(question.get_attribute("data-id"))
        answer = tb.finished_reply(page)
        answer_id = int(answer.get_attribute("data-id"))
        context = context_ids(node_ids=[answer_id])[answer_id]
        assert context[0] == question_id and lisbon_id in context

        # The reply's picture: what it was built from, it, and what it influenced; an arrow per edge.
        answer.click()
        figure = page.locator("#influence-graph")
        expect(figure.locator(".graph-node.focus")).to_have_attribute("data-id", str(answer_id))
        influenced = {e.id for e in node_influence(user=Message.objects.get(pk=answer_id).owner, node_id=answer_id)}
        expected = {answer_id, *context, *influenced}
        nodes, arrows = picture(figure)
        assert nodes == expected
        assert arrows == edges_among(expected) and (lisbon_id, answer_id) in arrows
        expect(figure.locator(f'.graph-node.kind-user[data-id="{lisbon_id}"]')).to_have_count(1)
        expect(figure.locator(f'.graph-node.kind-assistant[data-id="{answer_id}"]')).to_have_count(1)
        assert tb.serious_a11y_violations(page) == []
        tb.screenshot(page, "influence-panel")
        # A click on an item of this page opens its own picture.
        figure.locator(f'.graph-node[data-id="{question_id}"]').click()
        expect(figure.locator(".graph-node.focus")).to_have_attribute("data-id", str(question_id))
        page.keyboard.press("Escape")

        # The Forget preview's picture: the matched statement, and what was built from it.
        page.locator("#forget-open").click()
        page.locator("#forget-query").fill("Lisbon")
        page.locator("#forget-mode").select_option("keyword")
        page.locator("#forget-search-go").click()
        panel = page.locator("aside#forget")
        expect(panel.locator(f'.forget-item.matched[data-id="{lisbon_id}"]')).to_have_count(1)
        matched, tainted = (ids_of(panel.locator(f".forget-item.{kind}")) for kind in ("matched", "tainted"))
        panel.locator("#forget-graph summary").click()
        graph = panel.locator("#forget-graph-figure")
        expect(graph.locator(".graph-node").first).to_be_visible()
        nodes, arrows = picture(graph)
        assert nodes == matched | tainted and answer_id in nodes and tainted
        assert arrows == edges_among(nodes) and all(any(d == t for _, d in arrows) for t in tainted)
        assert ids_of(graph.locator(".graph-node.matched")) == matched
        tb.assert_in_view(page, panel.locator("#forget-confirm"))
        tb.screenshot(page, "influence-forget-preview")

        # Confirm: the reply goes, a placeholder that holds none of it stays under the question.
        answer_text = answer.locator(".content").text_content()
        panel.locator("#forget-confirm").click()
        expect(panel.locator("#forget-result")).to_contain_text("Deleted", timeout=tb.REPLY_TIMEOUT_MS)
        placeholder = page.locator(f'.reply-removed[data-question="{question_id}"]')
        expect(placeholder).to_contain_text("A reply was removed here because it used something you asked me to forget")
        assert answer_text.strip() not in placeholder.text_content()
        expect(page.locator(f'article.message[data-id="{answer_id}"]')).to_have_count(0)
        # The first conversation held nothing else: it has left the list.
        expect(page.locator(f'.conversations a[href="{first_url.removeprefix(base)}"]')).to_have_count(0)
        expect(page.locator(".conversations li[data-conversation]")).to_have_count(1)
        panel.locator("#forget-done").click()
        page.reload()
        expect(placeholder).to_be_visible()
        assert tb.serious_a11y_violations(page) == []
        tb.screenshot(page, "influence-placeholder")

        # Answer again: a new reply in the placeholder's place, with its own context (no Lisbon).
        expect(page.locator("#send")).to_be_enabled()  # connected
        placeholder.get_by_role("button", name="Answer again").click()
        expect(placeholder).to_have_count(0, timeout=tb.REPLY_TIMEOUT_MS)
        new_reply = page.locator("article.message.assistant[data-id]:not(.streaming)")
        expect(new_reply).to_have_count(1)
        new_id = int(new_reply.get_attribute("data-id"))
        assert Message.objects.get(pk=new_id).question_id == question_id
        assert context_ids(node_ids=[new_id])[new_id][0] == question_id
        assert lisbon_id not in context_ids(node_ids=[new_id])[new_id]
        assert page.evaluate(
            "([q, r]) => document.getElementById('m' + q).nextElementSibling === document.getElementById('m' + r)",
            [question_id, new_id],
        )
        expect(new_reply.locator(".used")).to_have_text(re.compile(r"^used \d+ stored items?$"))
        tb.screenshot(page, "influence-answered-again")
        assert not seen["errors"], seen["errors"]
