"""The page `lcrwmd serve` answers at /, in a real headless browser (Debian's chromium through
its WebDriver): type a query, see the neighbours the search endpoint gives, open one word
alignment. With LCRWMD_SCREENSHOT set, the final page is saved there (docs/serve_page.png)."""
import os
import shutil

import lcrwmd
import pytest

from test_serve import CLI, Server, index, queries  # noqa: F401 (the fixture)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.skipif(not os.path.exists(CLI), reason="no lcrwmd command line built"),
              pytest.mark.skipif(CHROMEDRIVER is None, reason="no chromium WebDriver")]


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_type_a_query_see_neighbours_open_an_alignment(index, browser):  # noqa: F811
    server = Server(index)
    try:
        text = queries()[0][2]
        status, want = server.request("/search", {"queries": [text], "k": 5, "method": "wmd"})
        assert status == 200
        want_ids = [n["id"] for n in want["results"][0]["neighbors"]]

        browser.get(server.url + "/")
        box = browser.find_element(By.ID, "text")
        box.send_keys(text)
        k = browser.find_element(By.ID, "k")
        k.clear()
        k.send_keys("5")
        wait = WebDriverWait(browser, 60)
        # The methods come from /info, each titled with its description.
        method = Select(browser.find_element(By.ID, "method"))
        wait.until(lambda d: len(method.options) == len(lcrwmd.methods()))
        assert [o.get_attribute("title") for o in method.options] == \
            [m["summary"] for m in lcrwmd.methods()]
        assert method.first_selected_option.text == "bm25"
        # A search box: bm25, query-to-document; wmd has no such form, so symmetric is taken.
        direction = Select(browser.find_element(By.ID, "direction"))
        assert direction.first_selected_option.text == "query-to-document"
        method.select_by_visible_text("wmd")
        assert direction.first_selected_option.text == "symmetric"
        browser.find_element(By.ID, "go").click()
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits tr.hit") or None)
        # The neighbours the endpoint gives, in order, with their labels and distances.
        shown = [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows]
        assert shown == want_ids
        # Each with the start of its text (kept in the index).
        status, with_text = server.request("/search", {"queries": [text], "k": 5, "method": "wmd",
                                                       "text": True})
        first_text = with_text["results"][0]["neighbors"][0]["text"]
        assert first_text and rows[0].find_elements(By.TAG_NAME, "td")[4].text.rstrip("…") \
            == first_text[:160].strip()
        rows[0].click()
        flows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#alignment .flow") or None)
        heading = browser.find_element(By.CSS_SELECTOR, "#alignment h2").text
        assert want_ids[0] in heading and "wmd" in heading
        assert len(flows) >= 3
        widths = [f.find_element(By.CLASS_NAME, "bar").size["width"] for f in flows]
        assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1] >= 0
        if os.environ.get("LCRWMD_SCREENSHOT"):
            browser.save_screenshot(os.environ["LCRWMD_SCREENSHOT"])
        # LC-RWMD query-to-document: the neighbours of that direction, said so, and only the
        # query's words moving in the alignment.
        Select(browser.find_element(By.ID, "method")).select_by_visible_text("lc-rwmd")
        direction.select_by_visible_text("query-to-document")
        browser.find_element(By.ID, "go").click()
        wait.until(lambda d: "query-to-document" in d.find_element(By.ID, "status").text)
        status, typed = server.request("/search", {"queries": [text], "k": 5, "method": "lc-rwmd",
                                                   "direction": "query-to-document"})
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits tr.hit") or None)
        assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == \
            [n["id"] for n in typed["results"][0]["neighbors"]]
        rows[0].click()
        titles = wait.until(lambda d: [h.text for h in d.find_elements(By.CSS_SELECTOR,
                                                                       "#alignment h3")] or None)
        assert len(titles) == 1 and titles[0].startswith("query → document")
        # Symmetric: the alignment reads from the side whose words move, document -> query
        # first, each row a word of the document pointing at a word of the query.
        direction.select_by_visible_text("symmetric")
        browser.find_element(By.ID, "go").click()
        wait.until(lambda d: "lc-rwmd symmetric" in d.find_element(By.ID, "status").text)
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits tr.hit") or None)
        doc = rows[0].find_elements(By.TAG_NAME, "td")[1].text
        rows[0].click()
        titles = wait.until(lambda d: [h.text for h in d.find_elements(By.CSS_SELECTOR,
                                                                       "#alignment h3")] or None)
        assert titles[0].startswith("document → query") and titles[1].startswith("query → document")
        first = browser.find_element(By.CSS_SELECTOR, "#alignment .flow")
        words = [x.text for x in first.find_elements(By.TAG_NAME, "span")]
        status, e = server.request("/explain", {"query": text, "doc": doc, "method": "lc-rwmd"})
        top = e["doc_to_query"]["flows"][0]
        assert words == [top["doc_word"], "→ " + top["query_word"]]
        # More like a result: its own words, by the service's default for documents, itself
        # left out.
        rows = browser.find_elements(By.CSS_SELECTOR, "#hits tr.hit")
        liked = rows[1].find_elements(By.TAG_NAME, "td")[1].text
        rows[1].find_element(By.TAG_NAME, "button").click()
        wait.until(lambda d: f"more like {liked}" in d.find_element(By.ID, "status").text)
        status, like = server.request("/search", {"like": liked, "k": 5})
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits tr.hit") or None)
        shown = [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows]
        assert shown == [n["id"] for n in like["results"][0]["neighbors"]] and liked not in shown
        assert "lc-rwmd symmetric" in browser.find_element(By.ID, "status").text
    finally:
        assert server.stop() == 0


def test_a_search_is_a_link_and_its_parameters_come_from_the_descriptions(index, browser):  # noqa: F811,E501
    server = Server(index)
    try:
        status, info = server.request("/info")
        status, want = server.request("/search", {"queries": ["goal"], "k": 4, "method": "bm25",
                                                  "bm25_k1": 0.5})
        assert status == 200
        browser.get(server.url + "/?q=goal&method=bm25&k=4&bm25_k1=0.5")
        wait = WebDriverWait(browser, 60)
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits tr.hit") or None)
        assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == \
            [n["id"] for n in want["results"][0]["neighbors"]]
        assert f"{info['documents']} documents" in browser.find_element(By.ID, "served").text
        # bm25's parameters, each an input with its description's default (k1 from the link).
        assert browser.find_element(By.ID, "p_bm25_k1").get_attribute("value") == "0.5"
        assert browser.find_element(By.ID, "p_bm25_b").get_attribute("value") == "0.75"
        assert "q=goal" in browser.current_url and "bm25_b=0.75" in browser.current_url
        Select(browser.find_element(By.ID, "method")).select_by_visible_text("act")
        assert browser.find_element(By.ID, "p_act_steps").get_attribute("value") == "1"
        assert not browser.find_elements(By.ID, "p_bm25_k1")
    finally:
        assert server.stop() == 0
