// kg-agent's web page: ask, stream the answer (SSE over fetch), show the cited
// evidence and draw the evidence path with Cytoscape.js. No framework, no build.
// Every string from the server goes into the page as text (textContent), never HTML.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  // How each kind of path node is drawn; the legend is built from this table too.
  const KINDS = {
    question: { color: "#1e293b", shape: "round-rectangle", label: "question" },
    entity: { color: "#2563eb", shape: "ellipse", label: "named in the question" },
    neighbour: { color: "#0d9488", shape: "ellipse", label: "linked neighbour" },
    bridge: { color: "#d97706", shape: "diamond", label: "multi-step bridge" },
    search: { color: "#7c3aed", shape: "hexagon", label: "text / vector search" },
    section: { color: "#f8fafc", shape: "round-rectangle", label: "cited section [n]" },
  };
  const SOURCES = {
    entity: "named in the question",
    graph: "graph neighbour",
    bridge: "multi-step bridge",
    bridge_linked: "linked to a bridge",
    hybrid: "text + vector search",
    dense: "vector search",
    bm25: "text search",
  };
  // [1], [1, 2], [1–3], [2,4-5] ...
  const CITE = /\[(\d+(?:\s*[,–-]\s*\d+)*)\]/g;

  let controller = null;
  let evidenceCount = 0;
  window.kgGraph = null;
  window.kgLastResult = null;

  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === "text") node.textContent = v;
      else if (k === "dataset") Object.assign(node.dataset, v);
      else if (k in node) node[k] = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  }
  const secs = (v) => (typeof v === "number" ? `${v < 1 ? v.toFixed(3) : v.toFixed(2)} s` : "");
  const isMultistep = (ev) => String(ev.source || "").startsWith("bridge");

  function setStatus(text) {
    $("status").textContent = text;
  }

  function showError(message) {
    const box = $("error");
    box.textContent = `Error: ${message}`;
    box.hidden = false;
    setStatus("failed");
    $("answer").classList.remove("streaming");
  }

  function reset() {
    $("error").hidden = true;
    $("answer-box").hidden = true;
    $("unanswerable").hidden = true;
    $("hops").hidden = true;
    for (const id of ["short-answer", "answer", "meta", "hop-list", "evidence"]) {
      $(id).replaceChildren();
    }
    evidenceCount = 0;
    window.kgLastResult = null;
    drawGraph({ nodes: [], edges: [] }, []);
  }

  // ------------------------------------------------------------------ asking
  async function ask(event) {
    event.preventDefault();
    if (controller) controller.abort();
    controller = new AbortController();
    const body = {
      question: $("question").value,
      top_k: Number($("top-k").value) || 8,
      retrieval: $("retrieval").value,
      multistep: $("multistep").checked,
      stream: true,
    };
    reset();
    setStatus("searching…");
    $("ask").disabled = true;
    let finished = false;
    try {
      const resp = await fetch("/v1/ask", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      const type = resp.headers.get("content-type") || "";
      if (!resp.ok || !type.startsWith("text/event-stream")) {
        let data = null;
        try {
          data = await resp.json();
        } catch (_) {
          /* not JSON: the status says enough */
        }
        if (!resp.ok || !data) throw new Error((data && data.error) || `HTTP ${resp.status}`);
        renderResult(data);
        return;
      }
      await readEvents(resp.body, (name, data) => {
        if (name === "retrieved") {
          setStatus(`found ${data.evidence} sections in ${secs(data.timings.retrieve)}; writing…`);
        } else if (name === "evidence") {
          renderEvidence(data.items, null);
        } else if (name === "text") {
          const answer = $("answer");
          $("answer-box").hidden = false;
          answer.classList.add("streaming");
          answer.append(data.text);
        } else if (name === "result") {
          finished = true;
          renderResult(data);
        } else if (name === "error") {
          finished = true;
          showError(data.error || `status ${data.status}`);
        }
      });
      if (!finished) showError("the connection closed before the answer was complete");
    } catch (err) {
      if (err.name !== "AbortError") showError(err.message || String(err));
    } finally {
      $("ask").disabled = false;
    }
  }

  // Server-Sent Events from a fetch body: blocks split by a blank line, each with
  // "event:" and "data:" fields (the data is JSON).
  async function readEvents(stream, handle) {
    const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    const dispatch = (block) => {
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
      if (data.length) handle(name, JSON.parse(data.join("\n")));
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = (buffer + value).replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    if (buffer.trim()) dispatch(buffer);
  }

  // ------------------------------------------------------------------ rendering
  function renderResult(r) {
    window.kgLastResult = r;
    $("answer-box").hidden = false;
    $("unanswerable").hidden = r.answerable !== false;
    $("short-answer").textContent = r.short_answer || "";
    const answer = $("answer");
    answer.classList.remove("streaming");
    evidenceCount = (r.evidence || []).length;
    answer.replaceChildren(...linkCitations(r.answer || ""));
    const meta = [`mode: ${r.mode}`];
    if (typeof r.support === "number") meta.push(`support ${Math.round(r.support * 100)}%`);
    if (r.short_answer && typeof r.confidence === "number") {
      meta.push(`confidence ${Math.round(r.confidence * 100)}%`);
    }
    for (const w of r.warnings || []) meta.push(`warning: ${w}`);
    $("meta").textContent = meta.join(" · ");
    renderHops(r.multistep);
    renderEvidence(r.evidence || [], r.citations || []);
    drawGraph(r.evidence_path || { nodes: [], edges: [] }, r.evidence || []);
    const t = r.timings || {};
    const parts = ["retrieve", "rerank", "synthesis"].filter((k) => k in t);
    setStatus(
      `answered in ${secs(t.total)}` +
        (parts.length ? ` (${parts.map((k) => `${k} ${secs(t[k])}`).join(", ")})` : ""),
    );
  }

  // The answer as text nodes and citation links: "[1]" is one link, "[1, 2]" and
  // "[1–3]" keep their brackets and separators with each number a link.
  function linkCitations(text) {
    const out = [];
    let last = 0;
    for (const m of text.matchAll(CITE)) {
      out.push(text.slice(last, m.index));
      const pieces = m[1].split(/(\d+)/).filter((p) => p !== "");
      const single = pieces.length === 1;
      if (!single) out.push("[");
      for (const p of pieces) {
        const n = Number(p);
        if (/^\d+$/.test(p) && n >= 1 && n <= evidenceCount) {
          out.push(citeLink(n, single ? `[${n}]` : p));
        } else {
          out.push(single ? `[${p}]` : p);
        }
      }
      if (!single) out.push("]");
      last = m.index + m[0].length;
    }
    out.push(text.slice(last));
    return out;
  }

  function citeLink(n, text) {
    const a = el("a", { href: `#ev-${n}`, className: "cite", text, dataset: { n } });
    a.setAttribute("aria-label", `evidence ${n}`);
    a.addEventListener("click", (e) => {
      e.preventDefault();
      focusEvidence(n, true);
    });
    return a;
  }

  function renderEvidence(items, citations) {
    const cited = citations ? new Set(citations.map((c) => c.section_id)) : null;
    const list = $("evidence");
    list.replaceChildren();
    items.forEach((ev, i) => {
      const n = ev.n || i + 1;
      const source = String(ev.source || "");
      const heading = ev.heading_path || "lead";
      let snippet = String(ev.content || "");
      if (snippet.length > 320) snippet = `${snippet.slice(0, 320).trimEnd()}…`;
      const li = el(
        "li",
        { id: `ev-${n}`, value: n, tabIndex: -1, dataset: { n } },
        el(
          "div",
          { className: "ev-head" },
          el("span", { className: "ev-n", text: `[${n}]` }),
          " ",
          el("strong", { text: ev.title }),
          ` — ${heading}`,
        ),
        el("p", { className: "ev-text", text: snippet }),
        el("span", { className: "tag", text: SOURCES[source] || source || "unknown" }),
      );
      if (isMultistep(ev)) {
        li.classList.add("multistep");
        li.append(" ", el("span", { className: "tag ms", text: "found by multi-step" }));
      }
      if (cited && !cited.has(ev.section_id)) {
        li.classList.add("uncited");
        li.append(" ", el("span", { className: "tag", text: "not cited" }));
      }
      list.append(li);
    });
  }

  function renderHops(ms) {
    const steps = (ms && ms.steps) || [];
    $("hops").hidden = steps.length === 0;
    $("hop-list").replaceChildren(
      ...steps.map((s) =>
        el("li", {
          text: `${s.kind || "step"}: ${s.query} — ${s.new_evidence ?? 0} new sections`,
        }),
      ),
    );
    if (steps.length) $("hops").open = true;
  }

  // Highlight evidence item n (and scroll to it); select its section node in the graph.
  function focusEvidence(n, scroll) {
    for (const li of document.querySelectorAll("#evidence li.highlight")) {
      li.classList.remove("highlight");
    }
    const item = $(`ev-${n}`);
    if (item) {
      item.classList.add("highlight");
      if (scroll) {
        item.scrollIntoView({ block: "nearest", behavior: "smooth" });
        item.focus({ preventScroll: true });
      }
    }
    const cy = window.kgGraph;
    if (cy) {
      cy.nodes(":selected").unselect();
      cy.nodes(`[kind = "section"][n = ${Number(n)}]`).select();
    }
  }

  // ------------------------------------------------------------------ the graph
  function drawGraph(path, evidence) {
    if (window.kgGraph) window.kgGraph.destroy();
    window.kgGraph = null;
    if (typeof cytoscape !== "function" || !(path.nodes || []).length) return;
    const bySection = new Map(evidence.map((ev) => [ev.section_id, ev]));
    const ids = new Set();
    const nodes = (path.nodes || []).map((node) => {
      ids.add(node.id);
      const ev = node.kind === "section" ? bySection.get(node.id.slice(2)) : null;
      const multistep = node.kind === "bridge" || Boolean(ev && isMultistep(ev));
      return { group: "nodes", data: { ...node, multistep }, classes: multistep ? "ms" : "" };
    });
    const edges = (path.edges || [])
      .filter((e) => ids.has(e.source) && ids.has(e.target))
      .map((e) => ({ group: "edges", data: { ...e, label: e.kind === "link" ? `${e.count}` : "" } }));
    const cy = cytoscape({
      container: $("graph"),
      elements: [...nodes, ...edges],
      style: graphStyle(),
      layout: {
        name: "breadthfirst",
        directed: true,
        roots: ids.has("q") ? "#q" : undefined,
        spacingFactor: 1,
        padding: 12,
      },
      selectionType: "single",
      maxZoom: 2.5,
    });
    cy.on("tap", "node", (e) => {
      const n = e.target.data("n");
      if (n) focusEvidence(n, true);
    });
    window.kgGraph = cy;
  }

  function graphStyle() {
    const style = [
      {
        selector: "node",
        style: {
          label: "data(label)",
          "font-size": 9,
          color: "#0f172a",
          "text-valign": "bottom",
          "text-margin-y": 3,
          "text-wrap": "wrap",
          "text-max-width": 66,
          width: 22,
          height: 22,
          "border-width": 1,
          "border-color": "#475569",
        },
      },
      {
        selector: "edge",
        style: {
          width: 1.2,
          "line-color": "#94a3b8",
          "target-arrow-color": "#94a3b8",
          "target-arrow-shape": "triangle",
          "arrow-scale": 0.7,
          "curve-style": "bezier",
          label: "data(label)",
          "font-size": 8,
          color: "#64748b",
          "text-background-color": "#fff",
          "text-background-opacity": 1,
        },
      },
      { selector: 'edge[kind = "names"]', style: { "line-color": "#2563eb", width: 2 } },
      { selector: 'edge[kind = "link"]', style: { "line-style": "dashed" } },
      { selector: 'edge[kind = "section"]', style: { "line-color": "#cbd5e1" } },
      {
        selector: 'node[kind = "question"]',
        style: {
          width: 30,
          height: 18,
          "text-valign": "top",
          "text-margin-y": -3,
          "text-max-width": 180,
          "font-weight": "bold",
        },
      },
      { selector: 'node[kind = "section"]', style: { width: 16, height: 12 } },
      {
        selector: "node.ms",
        style: { "border-width": 3, "border-style": "dashed", "border-color": "#b45309" },
      },
      {
        selector: "node:selected",
        style: {
          "border-width": 4,
          "border-style": "solid",
          "border-color": "#dc2626",
          "font-weight": "bold",
        },
      },
    ];
    for (const [kind, k] of Object.entries(KINDS)) {
      style.splice(2, 0, {
        selector: `node[kind = "${kind}"]`,
        style: { "background-color": k.color, shape: k.shape },
      });
    }
    return style;
  }

  function renderLegend() {
    const items = Object.values(KINDS).map((k) =>
      el(
        "li",
        {},
        el("span", {
          className: `swatch ${k.shape}`,
          style: `background:${k.color}`,
          "aria-hidden": "true",
        }),
        k.label,
      ),
    );
    items.push(
      el("li", {}, el("span", { className: "swatch dashed", "aria-hidden": "true" }), "found by multi-step"),
      el("li", {}, el("span", { className: "swatch line", "aria-hidden": "true" }), "link (count)"),
    );
    $("legend").replaceChildren(...items);
  }

  $("ask-form").addEventListener("submit", ask);
  renderLegend();
  $("question").focus();
})();
