#pragma once
// The page `lcrwmd serve` answers at /: a query box, the methods as GET /info describes them
// (the text method first: bm25) and the directions each has (query-to-document first: what a
// search box's few words want), the query's neighbours (label and the start of their text) with
// the method and direction that answered, "more like this" on each (the document's own words,
// the symmetric distance), and the word alignment of the one clicked (a method without words to
// show: /explain's default, wmd), each direction drawn from the side whose words move (POST
// /search, POST /explain). Above them, what is served (/info's counts); beside the method, an
// input for each of its parameters, as its description gives it (name, default, range, help).
// A search is a link: /?q=TEXT (with &method=, &direction=, &k= and any parameter by its name)
// fills the form and runs it, and each search puts its own in the address bar.
// Plain HTML and JavaScript, no external file.
namespace lcrwmd::app {

inline constexpr const char* kServePage = R"html(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lcrwmd search</title>
<style>
body{font:15px system-ui,sans-serif;margin:2em auto;max-width:64em;color:#222}
textarea{width:100%;height:6em;font:inherit}
table{border-collapse:collapse;width:100%}td,th{padding:.2em .5em;text-align:left}
tr.hit{cursor:pointer}tr.hit:hover,tr.open{background:#eef}
.flow{display:flex;align-items:center;gap:.5em;margin:.1em 0}
.flow span{width:12em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.bar{height:.8em;background:#57a}.err{color:#b00}
td.text{color:#555;font-size:90%}h3{font-size:100%;margin:1em 0 .3em}
</style></head><body>
<h1>lcrwmd</h1>
<p id="served"></p>
<form id="f"><textarea id="text" placeholder="a query text"></textarea>
<p>k <input id="k" type="number" value="10" min="1" style="width:5em">
method <select id="method"></select> <span id="params"></span>
direction <select id="direction">
<option value="query-to-document" title="each query word to its nearest document word: for a few typed words">query-to-document</option>
<option value="symmetric" title="max of both directions: how alike two documents are">symmetric</option>
<option value="document-to-query" title="each document word to its nearest query word">document-to-query</option>
</select>
<button id="go">Search</button> <span id="status"></span></p></form>
<table id="hits"></table><div id="alignment"></div>
<script>
const $ = id => document.getElementById(id);
async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify(body)});
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}
// The methods, each with its one-line description and its directions, as the server describes
// them; a direction the method lacks cannot be chosen (wmd and wcd: symmetric only).
let explains = {}, directions = {}, parameters = {};
function directionsOf() {
  const have = directions[$("method").value] || ["symmetric"];
  for (const o of $("direction").options) o.disabled = !have.includes(o.value);
  if ($("direction").selectedOptions[0].disabled)
    $("direction").value = [...$("direction").options].find(o => !o.disabled).value;
  // The method's parameters, each an input holding its default (from the query string if given).
  const given = new URLSearchParams(location.search);
  $("params").replaceChildren();
  for (const p of parameters[$("method").value] || []) {
    const input = Object.assign(document.createElement("input"), {type: "number", id: "p_" + p.name,
      value: given.get(p.name) ?? p.default, min: p.min, step: p.type === "integer" ? 1 : "any", title: p.help});
    if (p.max !== null) input.max = p.max;
    input.style.width = "5em";
    const label = document.createElement("label"); label.title = p.help;
    label.append(p.name + " ", input, " ");
    $("params").append(label);
  }
}
$("method").onchange = directionsOf;
fetch("/info").then(r => r.json()).then(info => {
  for (const m of info.method_details) {
    $("method").append(Object.assign(document.createElement("option"), {value: m.name, textContent: m.name, title: m.summary}));
    explains[m.name] = m.explains;
    directions[m.name] = m.directions;
    parameters[m.name] = m.parameters;
  }
  const c = info.collection;
  $("served").textContent = `${info.documents} document${info.documents === 1 ? "" : "s"}, ` +
    `${info.vocabulary} words` + (c ? `; a collection of ${c.segments} segment${c.segments === 1 ? "" : "s"}` +
    `, ${c.deleted} deleted, generation ${c.generation}` : "");
  const given = new URLSearchParams(location.search);
  $("method").value = directions[given.get("method")] ? given.get("method") : info.default_method;
  if (given.get("k")) $("k").value = given.get("k");
  if (given.get("direction")) $("direction").value = given.get("direction");
  directionsOf();
  if (given.get("q")) { $("text").value = given.get("q"); $("f").requestSubmit(); }
});
function cell(tr, text) { const td = document.createElement("td"); td.textContent = text; tr.append(td); }
// Shows an answer of /search: its method and direction, and each neighbour with "more like
// this"; a click on a row aligns it with `text` (the query's, or the liked document's).
function show(r, what, t0, text) {
  $("status").textContent = `${what}${r.method} ${r.direction}: ${Math.round(performance.now() - t0)} ms`;
  const head = document.createElement("tr");
  for (const h of ["#", "document", "label", r.ranked_by, "text", ""]) { const th = document.createElement("th"); th.textContent = h; head.append(th); }
  $("hits").append(head);
  r.results[0].neighbors.forEach((n, i) => {
    const tr = document.createElement("tr"); tr.className = "hit";
    cell(tr, i + 1); cell(tr, n.id); cell(tr, n.label); cell(tr, n[r.ranked_by].toFixed(4));
    const start = n.text == null ? "" : n.text.length > 160 ? n.text.slice(0, 160) + "…" : n.text;
    cell(tr, start); tr.lastChild.className = "text"; tr.lastChild.title = n.text || "";
    const like = Object.assign(document.createElement("button"), {textContent: "more like this", type: "button"});
    like.onclick = ev => { ev.stopPropagation(); moreLike(n.id, n.text); };
    const td = document.createElement("td"); td.append(like); tr.append(td);
    tr.onclick = () => explains[r.method] ? align(tr, text, n.id, r.method, r.direction) : align(tr, text, n.id);
    $("hits").append(tr);
  });
}
function fail(err) { $("status").innerHTML = ""; $("status").append(Object.assign(document.createElement("span"), {className: "err", textContent: err.message})); }
function clear() { $("hits").replaceChildren(); $("alignment").replaceChildren(); $("status").textContent = "..."; }
$("f").onsubmit = async e => {
  e.preventDefault();
  clear();
  const method = $("method").value, direction = $("direction").value, text = $("text").value;
  const body = {queries: [text], k: +$("k").value, method, direction, text: true};
  const link = new URLSearchParams({q: text, method, direction, k: body.k});
  for (const p of parameters[method] || []) {
    body[p.name] = +$("p_" + p.name).value;
    link.set(p.name, body[p.name]);
  }
  history.replaceState(null, "", "?" + link);
  try {
    const t0 = performance.now();
    show(await post("/search", body), "", t0, text);
  } catch (err) { fail(err); }
};
// More like a document: its own words, by the service's default for documents.
async function moreLike(id, text) {
  clear();
  try {
    const t0 = performance.now();
    show(await post("/search", {like: id, k: +$("k").value, text: true}), `more like ${id}: `, t0, text || "");
  } catch (err) { fail(err); }
}
async function align(tr, text, doc, method, direction) {
  document.querySelectorAll("tr.open").forEach(x => x.classList.remove("open")); tr.classList.add("open");
  const box = $("alignment"); box.replaceChildren();
  try {
    const e = await post("/explain", {query: text, doc, method, direction});
    const h = document.createElement("h2");
    h.textContent = `${doc}: ${e.method} ${e.distance.toFixed(4)}, the words that carried it`;
    box.append(h);
    // WMD: one flow, query words to document words. The relaxations: each direction asked moves
    // its own side's words (document -> query: each document word to its nearest query word).
    const lists = e.doc_to_query === undefined
      ? [["query word → document word", e.flows, f => [f.query_word, f.doc_word]]]
      : (e.direction === "query-to-document" ? [] : [["document → query: each document word to its nearest query word" + (e.doc_to_query.set_distance ? " (sets the distance)" : ""),
          e.doc_to_query.flows, f => [f.doc_word, f.query_word]]])
          .concat(e.direction === "document-to-query" ? [] : [["query → document: each query word to its nearest document word" + (e.query_to_doc.set_distance ? " (sets the distance)" : ""),
                                  e.query_to_doc.flows, f => [f.query_word, f.doc_word]]]);
    for (const [title, flows, ends] of lists) {
      const t = document.createElement("h3"); t.textContent = title; box.append(t);
      const top = flows.slice(0, 30), most = Math.max(...top.map(f => f.mass * f.cost), 1e-12);
      for (const f of top) {
        const [from, to] = ends(f);
        const row = document.createElement("div"); row.className = "flow";
        const a = document.createElement("span"); a.textContent = from;
        const bar = document.createElement("div"); bar.className = "bar";
        bar.style.width = `${(20 * f.mass * f.cost / most).toFixed(2)}em`;
        bar.title = `mass ${f.mass.toFixed(4)} x cost ${f.cost.toFixed(3)}`;
        const b = document.createElement("span"); b.textContent = "→ " + to;
        row.append(a, bar, b); box.append(row);
      }
    }
  } catch (err) { box.append(Object.assign(document.createElement("p"), {className: "err", textContent: err.message})); }
}
</script></body></html>
)html";

}  // namespace lcrwmd::app
