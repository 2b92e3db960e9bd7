// Mallard's board page: draws what the server describes and sends what is clicked or dragged.
// It holds no rules: the legal targets, the move texts, results, clocks, evaluations and FENs all
// come from the server's `state` messages; a move the server refuses comes back as an `error`.
// The page only counts the running clock down between two states, for the eye: the server keeps
// the time and decides a loss on time.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const GLYPHS = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
const $ = (id) => document.getElementById(id);

let socket = null;
let state = null;          // the last state message
let shownBoard = null;     // the board drawn: the state's, or a preview's
let selectedFrom = null;   // duck: the square of the piece picked
let chosenPiece = null;    // duck: the piece move picked, waiting for its duck square
let lines = {};            // analysis lines by multipv number, for the position shown
let linesSearch = null;
let verdict = "";
let stateAt = 0;           // performance.now() when the state arrived (the clocks count from it)
let drag = null;           // duck: {from, kind: "piece"|"duck", ghost, moved} while the pointer is down
let dismissedEnd = null;   // the game end whose banner the person closed
const LEVELS = 20;

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function say(text, kind) {
  const box = $("message");
  box.textContent = text || "";
  box.className = text ? (kind || "note") : "";
}

function connect() {
  const query = new URLSearchParams(location.search);
  const address = new URLSearchParams({game: query.get("game") || "duck"});
  // the server's token comes in the page's own address and goes with the socket, never in a
  // cookie (a browser would send a cookie to every server of this host, whatever the port)
  if (query.has("token")) address.set("token", query.get("token"));
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws?${address}`);
  socket.onopen = () => { $("connection").textContent = "connected"; };
  socket.onclose = () => { $("connection").textContent = "disconnected: reload the page"; };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
}

function receive(message) {
  if (message.type === "state") {
    const moved = !state || state.fen !== message.fen || state.variant !== message.variant;
    // a piece the user holds stays held through a state that leaves the board as it was (a
    // play setting, a clock, the analysis switched)
    const sameBoard = !moved && state.cursor === message.cursor &&
      state.moves.length === message.moves.length;
    state = message;
    stateAt = performance.now();
    if (moved) { lines = {}; linesSearch = null; verdict = ""; }
    if (!sameBoard) selectedFrom = chosenPiece = null;
    showState();
  } else if (message.type === "error") {
    selectedFrom = chosenPiece = null;
    if (shownBoard) draw(shownBoard);
    say(message.message, "error");
  } else if (message.type === "info") {
    receiveInfo(message);
  } else if (message.type === "preview") {
    shownBoard = message.board;
    $("preview-bar").hidden = false;
    $("preview-moves").textContent = message.moves.join(" ");
    draw(shownBoard);
  } else if (message.type === "pgn") {
    $("pgn").value = message.pgn;
    say("PGN exported below", "note");
  }
}

// --- the state -------------------------------------------------------------------------------
function showState() {
  shownBoard = state.board;
  $("preview-bar").hidden = true;
  for (const button of document.querySelectorAll("#games button")) {
    button.classList.toggle("active", button.dataset.game === state.variant);
  }
  const sides = state.sides;
  $("to-move").textContent = state.over ? "" : `${sides[state.toMove]} to move`;
  $("result").textContent = state.result;
  $("thinking").hidden = !state.engine.thinking;
  $("fen").value = state.fen;
  for (const option of $("engine-side").options) {
    if (option.dataset.side !== undefined) option.textContent = sides[option.dataset.side];
  }
  const engine = state.engine;
  $("engine-name").textContent = engine.error ? engine.error :
    (engine.name ? `engine: ${engine.name}` : "the engine starts when it is needed");
  $("analyse").textContent = engine.analysing ? "Stop analysis" : "Start analysis";
  if (document.activeElement !== $("level")) $("level").value = String(engine.level);
  showMoves();
  draw(shownBoard);
  showAnalysis();
  showProof();
  showClocks();
  showEvaluation();
  showGameOver();
}

// --- clocks, evaluation, game end ------------------------------------------------------------
function clockText(ms) {
  const tenths = Math.max(0, Math.floor(ms / 100));
  const minutes = Math.floor(tenths / 600), seconds = Math.floor(tenths / 10) % 60;
  const base = `${minutes}:${String(seconds).padStart(2, "0")}`;
  return ms < 10000 ? `${base}.${tenths % 10}` : base;
}

function showClocks() {
  const clock = state && state.clock;
  const top = $("clock-top"), bottom = $("clock-bottom");
  top.hidden = bottom.hidden = !clock;
  if (!clock) return;
  const lowerSide = flipped() ? 1 : 0;  // the side drawn at the bottom
  for (const [box, side] of [[bottom, lowerSide], [top, 1 - lowerSide]]) {
    let left = clock.left[side];
    if (clock.running === side) left -= performance.now() - stateAt;
    box.textContent = "";
    const name = document.createElement("span");
    name.textContent = state.sides[side];
    const time = document.createElement("span");
    time.className = "time";
    time.textContent = clockText(left);
    box.append(name, time);
    box.dataset.side = side;
    box.classList.toggle("running", clock.running === side && left > 0);
    box.classList.toggle("low", left < 10000);
  }
}

// the first player's winning chance of an evaluation, for the bar and the graph
function chance(evaluation) {
  if (!evaluation) return null;
  if (evaluation.mate !== undefined) return evaluation.mate > 0 ? 1 : 0;
  return 1 / (1 + Math.exp(-0.004 * evaluation.cp));
}

function evalText(evaluation) {
  if (!evaluation) return "";
  if (evaluation.mate !== undefined) return (evaluation.mate > 0 ? "+" : "-") + "M" + Math.abs(evaluation.mate);
  return (evaluation.cp >= 0 ? "+" : "") + (evaluation.cp / 100).toFixed(1);
}

function showEvaluation() {
  const evaluation = state.evals[state.cursor];
  const share = chance(evaluation);
  const lower = flipped() ? 1 - (share ?? 0.5) : (share ?? 0.5);
  $("eval-fill").style.height = `${(lower * 100).toFixed(1)}%`;
  $("eval-text").textContent = evalText(evaluation);
  $("eval-bar").dataset.eval = evaluation ? JSON.stringify(evaluation) : "";
  drawGraph();
}

function drawGraph() {
  const svg = $("graph");
  const width = 600, height = 100, plies = Math.max(1, state.moves.length);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.textContent = "";
  const x = (ply) => (ply / plies) * width;
  const y = (share) => height * (1 - share);
  el("line", { x1: 0, x2: width, y1: height / 2, y2: height / 2, class: "graph-axis" }, svg);
  const points = [];
  state.evals.forEach((evaluation, ply) => {
    const share = chance(evaluation);
    if (share !== null) points.push([ply, share]);
  });
  if (points.length) {
    const line = points.map(([ply, share]) => `${x(ply).toFixed(1)},${y(share).toFixed(1)}`);
    el("polygon", { points: `${x(points[0][0])},${height} ${line.join(" ")} ${x(points[points.length - 1][0])},${height}`,
                    class: "graph-area" }, svg);
    el("polyline", { points: line.join(" "), class: "graph-line" }, svg);
  }
  for (const [ply, share] of points) {
    el("circle", { cx: x(ply), cy: y(share), r: 3, "data-ply": ply,
                   class: "graph-point" + (ply === state.cursor ? " current" : "") }, svg);
  }
  el("line", { x1: x(state.cursor), x2: x(state.cursor), y1: 0, y2: height,
               class: "graph-cursor" }, svg);
}

function graphClick(event) {
  if (!state) return;
  const box = $("graph").getBoundingClientRect();
  const plies = state.moves.length;
  const ply = Math.round(((event.clientX - box.left) / box.width) * Math.max(1, plies));
  send({ cmd: "goto", ply: Math.max(0, Math.min(plies, ply)) });
}

function showGameOver() {
  const text = state.gameOver;
  const key = `${state.moves.length}:${text}`;
  const show = Boolean(text) && state.cursor === state.moves.length && dismissedEnd !== key;
  $("game-over").hidden = !show;
  $("game-over-text").textContent = text;
}

function showMoves() {
  const list = $("moves");
  list.textContent = "";
  state.moves.forEach((move, index) => {
    const item = document.createElement("li");
    const link = document.createElement("span");
    link.className = "move" + (index + 1 === state.cursor ? " current" : "");
    link.textContent = move.human;
    link.title = move.text;
    link.dataset.ply = index + 1;
    link.onclick = () => send({ cmd: "goto", ply: index + 1 });
    item.appendChild(link);
    const proof = state.proofs[index + 1];
    if (proof) {  // the proven value after the move, and "??" when the move spoiled its own
      const mark = document.createElement("span");
      mark.className = "proof-mark" + (proof.mistake ? " mistake" : "");
      mark.dataset.value = proof.value;
      mark.textContent = PROOF_MARKS[proof.value] + (proof.mistake ? "??" : "");
      mark.title = `after it: ${proof.value}` + (proof.mistake ? ` (the move ${proof.mistake})` : "");
      item.appendChild(mark);
    }
    list.appendChild(item);
  });
}

// --- the proof of a whole UTTT game --------------------------------------------------------
const PROOF_MARKS = { "X wins": "X", "O wins": "O", "draw": "=", "unknown": "?" };

function proofText(proof) {
  return `${proof.value} (${proof.seconds.toFixed(2)} s, ${proof.nodes.toLocaleString("en")} nodes)`;
}

function showProof() {
  const proof = state.proof;
  $("prove-box").hidden = state.variant !== "uttt";
  $("prove").textContent = proof.running ? "Stop proving" : "Prove the game";
  let status = "";
  if (proof.running) {
    status = `Proving from the end backwards: ${proof.done} of ${proof.total} positions, ` +
      `at most ${proof.limit} s each`;
  } else if (proof.error) {
    status = proof.error;
  } else if (proof.done) {
    const proven = state.proofs.filter((p) => p && p.value !== "unknown").length;
    status = `${proven} of ${proof.total} positions proven`;
  }
  $("proof-status").textContent = status;
  const shown = state.proofs[state.cursor];
  $("proof-shown").textContent = shown ? `This position: ${proofText(shown)}` +
    (shown.mistake ? `; the move before it ${shown.mistake}` : "") : "";
}

// --- analysis --------------------------------------------------------------------------------
function receiveInfo(info) {
  if (!state || info.fen !== state.fen) return;  // for another position
  if (info.string) {
    if (info.string.startsWith("proven")) { verdict = `Prover: ${info.string}`; showAnalysis(); }
    return;
  }
  if (!info.score) return;
  if (info.eval && (info.multipv || 1) === 1) {
    state.evals[state.cursor] = info.eval;
    showEvaluation();
  }
  if (linesSearch !== info.search) { lines = {}; linesSearch = info.search; }
  lines[info.multipv] = info;
  showAnalysis();
}

function showAnalysis() {
  $("verdict").textContent = verdict;
  const list = $("analysis");
  list.textContent = "";
  const numbers = Object.keys(lines).map(Number).sort((a, b) => a - b);
  for (const number of numbers) {
    const line = lines[number];
    const item = document.createElement("li");
    item.className = "line";
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = line.scoreText;
    item.appendChild(score);
    const depth = document.createElement("span");
    depth.className = "muted";
    depth.textContent = `depth ${line.depth} `;
    item.appendChild(depth);
    line.pvHuman.forEach((san, index) => {
      const move = document.createElement("span");
      move.className = "pv-move";
      move.textContent = san;
      move.title = "preview the position after this move";
      move.onclick = () => send({ cmd: "preview", moves: line.pv.slice(0, index + 1) });
      item.appendChild(move);
    });
    list.appendChild(item);
  }
  const scores = $("cfour-scores");
  scores.textContent = "";
  if (state && state.variant === "cfour") {
    for (const line of Object.values(lines)) {
      if (line.column === undefined) continue;
      const label = document.createElement("span");
      label.className = "cfour-score";
      label.dataset.column = line.column;
      label.textContent = `${state.board.files[line.column]}: ${line.scoreText}`;
      scores.appendChild(label);
    }
    if (shownBoard === state.board) draw(shownBoard);  // the scores under the columns
  }
}

// --- drawing ---------------------------------------------------------------------------------
function draw(board) {
  const svg = $("board");
  svg.textContent = "";
  if (board.kind === "duck") drawDuck(svg, board);
  else if (board.kind === "cfour") drawCfour(svg, board);
  else drawUttt(svg, board);
}

function flipped() {
  return state && state.engine.side === 0;  // the person plays the second side
}

function duckTargets(board) {
  const from = new Set(), to = new Set();
  let ducks = new Set();
  for (const move of board.moves) {
    from.add(move.from);
    if (move.from === selectedFrom) to.add(move.to);
  }
  if (chosenPiece) ducks = new Set(chosenPiece.ducks);
  return { from, to, ducks };
}

function drawDuck(svg, board) {
  const size = 60;
  svg.setAttribute("viewBox", `0 0 ${8 * size + 16} ${8 * size + 16}`);
  const live = board === (state && state.board);
  const targets = live ? duckTargets(board) : { from: new Set(), to: new Set(), ducks: new Set() };
  const last = board.last || {};
  const marked = new Set([last.from, last.to]);
  for (let rank = 0; rank < 8; rank++) {
    for (let file = 0; file < 8; file++) {
      const name = "abcdefgh"[file] + (rank + 1);
      const x = 16 + (flipped() ? 7 - file : file) * size;
      const y = (flipped() ? rank : 7 - rank) * size;
      let cls = "square " + ((rank + file) % 2 ? "light" : "dark");
      if (name === selectedFrom) cls += " selected";
      else if (targets.ducks.has(name)) cls += " duck-target";
      else if (targets.to.has(name)) cls += " target";
      if (marked.has(name)) cls += " last";
      const square = el("rect", { x, y, width: size, height: size, class: cls,
                                  "data-square": name }, svg);
      square.addEventListener("pointerdown", (event) => pointerDown(event, name));
      const piece = board.squares[name];
      if (piece) {
        const white = piece === piece.toUpperCase();
        const glyph = el("text", { x: x + size / 2, y: y + size * 0.8, "font-size": size * 0.8,
                                   "text-anchor": "middle", "data-piece": name,
                                   class: "piece " + (white ? "white" : "black") }, svg);
        glyph.textContent = GLYPHS[piece.toLowerCase()];
      } else if (targets.to.has(name) || targets.ducks.has(name)) {
        el("circle", { cx: x + size / 2, cy: y + size / 2, r: size * 0.14, class: "target-dot" }, svg);
      }
      if (board.duck === name) drawDuckBird(svg, x, y, size);
    }
  }
  for (let index = 0; index < 8; index++) {
    const file = flipped() ? 7 - index : index, rank = flipped() ? index : 7 - index;
    el("text", { x: 16 + index * size + size / 2, y: 8 * size + 12, class: "coord",
                 "text-anchor": "middle" }, svg).textContent = "abcdefgh"[file];
    el("text", { x: 4, y: index * size + size / 2, class: "coord" }, svg).textContent = rank + 1;
  }
}

function drawDuckBird(svg, x, y, size) {
  const group = el("g", { "data-duck": "1", "pointer-events": "none" }, svg);
  return drawDuckShape(group, x, y, size);
}

function drawDuckShape(group, x, y, size) {
  el("ellipse", { cx: x + size * 0.45, cy: y + size * 0.62, rx: size * 0.3, ry: size * 0.2,
                  fill: "#ffd600", stroke: "#7a5a00" }, group);
  el("circle", { cx: x + size * 0.66, cy: y + size * 0.36, r: size * 0.14, fill: "#ffd600",
                 stroke: "#7a5a00" }, group);
  el("polygon", { points: `${x + size * 0.78},${y + size * 0.34} ${x + size * 0.95},${y + size * 0.4} ${x + size * 0.78},${y + size * 0.44}`,
                  fill: "#ff8f00" }, group);
  el("circle", { cx: x + size * 0.69, cy: y + size * 0.33, r: size * 0.025, fill: "#000" }, group);
}

// A press on a square: a piece (or, when its move is chosen, the duck) may be dragged; a press
// and release on one square is a click. Dragging is the same as clicking its start and its end.
function pointerDown(event, name) {
  if (event.button !== 0) return;
  if (!state || shownBoard !== state.board) { send({ cmd: "state" }); return; }
  const board = state.board;
  event.preventDefault();
  let kind = null;
  if (chosenPiece && board.duck === name) kind = "duck";
  else if (!chosenPiece && board.moves.some((m) => m.from === name)) kind = "piece";
  drag = { from: name, kind, ghost: null, moved: false, x: event.clientX, y: event.clientY,
           picked: false };
  if (kind === "piece" && name !== selectedFrom) { clickDuck(name); drag.picked = true; }
  window.addEventListener("pointermove", pointerMove);
  window.addEventListener("pointerup", pointerUp, { once: true });
}

function svgPoint(clientX, clientY) {
  const svg = $("board");
  const point = svg.createSVGPoint();
  point.x = clientX;
  point.y = clientY;
  return point.matrixTransform(svg.getScreenCTM().inverse());
}

function pointerMove(event) {
  if (!drag || !drag.kind) return;
  if (!drag.moved && Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < 4) return;
  const svg = $("board");
  const size = 60;
  const at = svgPoint(event.clientX, event.clientY);
  if (!drag.ghost || !drag.ghost.isConnected) {
    drag.moved = true;
    if (drag.kind === "piece") {
      const piece = state.board.squares[drag.from];
      const white = piece === piece.toUpperCase();
      drag.ghost = el("text", { "font-size": size * 0.8, "text-anchor": "middle",
                                class: "piece ghost " + (white ? "white" : "black") }, svg);
      drag.ghost.textContent = GLYPHS[piece.toLowerCase()];
      const original = svg.querySelector(`[data-piece="${drag.from}"]`);
      if (original) original.classList.add("dragged");
    } else {
      drag.ghost = el("g", { class: "ghost" }, svg);
      drawDuckShape(drag.ghost, -size / 2, -size / 2, size);
      const original = svg.querySelector("[data-duck]");
      if (original) original.classList.add("dragged");
    }
  }
  if (drag.kind === "piece") {
    drag.ghost.setAttribute("x", at.x);
    drag.ghost.setAttribute("y", at.y + size * 0.3);
  } else {
    drag.ghost.setAttribute("transform", `translate(${at.x},${at.y})`);
  }
}

function pointerUp(event) {
  window.removeEventListener("pointermove", pointerMove);
  const done = drag;
  drag = null;
  if (!done) return;
  const under = document.elementFromPoint(event.clientX, event.clientY);
  const square = under && under.closest ? under.closest("[data-square]") : null;
  const target = square ? square.dataset.square : null;
  if (done.moved) {
    if (done.ghost) done.ghost.remove();
    if (target && target !== done.from) clickDuck(target);
    else draw(shownBoard);  // dropped where it was, or off the board: nothing happens
  } else if (target === done.from && !done.picked) {
    clickDuck(target);
  }
}

function clickDuck(name) {
  if (shownBoard !== state.board) { send({ cmd: "state" }); return; }  // leave a preview
  const board = state.board;
  say("");
  if (chosenPiece) {  // the duck's square: the server judges it
    send({ cmd: "move", piece: chosenPiece.uci, duck: name });
    return;
  }
  if (selectedFrom) {
    const candidates = board.moves.filter((m) => m.from === selectedFrom && m.to === name);
    if (candidates.length) {
      const promotion = $("promotion").value;
      const move = candidates.find((m) => !m.promotion || m.promotion === promotion) ||
        candidates[0];
      chosenPiece = { uci: move.from + move.to + move.promotion, ducks: move.ducks };
      say("Now click a highlighted square for the duck", "note");
      draw(board);
      return;
    }
    if (board.moves.some((m) => m.from === name)) {
      selectedFrom = name;
      draw(board);
      return;
    }
    const text = selectedFrom + name;
    selectedFrom = null;
    send({ cmd: "move", move: text });  // not a legal piece move: the server says why
    return;
  }
  if (board.moves.some((m) => m.from === name)) {
    selectedFrom = name;
    $("promotion-box").hidden = !board.moves.some((m) => m.from === name && m.promotion);
    draw(board);
  } else if (state.over) {
    say(`The game is over: ${state.result}`, "error");
  } else {
    say("No piece that can move there: click one of your pieces first", "error");
  }
}

function drawCfour(svg, board) {
  const size = 64, top = 8, bottom = 24;
  const width = board.width * size, height = board.height * size;
  svg.setAttribute("viewBox", `0 0 ${width} ${height + top + bottom}`);
  el("rect", { x: 0, y: top, width, height, class: "cf-frame" }, svg);
  for (let column = 0; column < board.width; column++) {
    for (let row = 0; row < board.height; row++) {
      const owner = board.columns[column][row];
      const cls = owner === null || owner === undefined ? "cf-hole" : `cf-stone-${owner}`;
      el("circle", { cx: column * size + size / 2, cy: top + height - row * size - size / 2,
                     r: size * 0.4, class: cls, "data-cell": `${column},${row}` }, svg);
    }
    const full = board.columns[column].length >= board.height;
    const hit = el("rect", { x: column * size, y: 0, width: size, height: height + top,
                             class: "cf-column" + (full ? " full" : ""),
                             "data-column": column }, svg);
    hit.addEventListener("click", () => {
      if (shownBoard !== state.board) { send({ cmd: "state" }); return; }
      say("");
      send({ cmd: "move", move: board.files[column] });
    });
    const last = board.last;
    if (last && last.column === column) {
      el("circle", { cx: column * size + size / 2, cy: top + height - last.row * size - size / 2,
                     r: size * 0.3, class: "cf-last", "data-last": "1" }, svg);
    }
    const line = Object.values(lines).find((l) => l.column === column);
    const label = el("text", { x: column * size + size / 2, y: top + height + 16,
                               class: "colscore", "data-column": column }, svg);
    label.textContent = line && board === (state && state.board) ? line.scoreText
      : board.files[column];
  }
}

function drawUttt(svg, board) {
  const cell = 48, gap = 10, span = 3 * cell;
  const total = 3 * span + 4 * gap;
  svg.setAttribute("viewBox", `0 0 ${total} ${total}`);
  const legal = new Set(board.legal);
  for (let b = 0; b < 9; b++) {
    const bx = gap + (b % 3) * (span + gap), by = gap + Math.floor(b / 3) * (span + gap);
    const status = board.boards[b];
    let cls = "miniboard";
    if (status !== ".") cls += " closed";
    else if (board.forced === b) cls += " forced";
    else if (board.forced === null && board.legal.some((m) => Math.floor(m / 9) === b)) {
      cls += " playable";
    }
    el("rect", { x: bx, y: by, width: span, height: span, class: cls, "data-board": b }, svg);
    for (let c = 0; c < 9; c++) {
      const x = bx + (c % 3) * cell, y = by + Math.floor(c / 3) * cell;
      const move = b * 9 + c;
      const hit = el("rect", { x, y, width: cell, height: cell,
                               class: "uttt-cell" + (legal.has(move) ? " legal" : ""),
                               "data-move": move }, svg);
      hit.addEventListener("click", () => {
        if (shownBoard !== state.board) { send({ cmd: "state" }); return; }
        say("");
        send({ cmd: "move", move: board.moveTexts[move] });
      });
      if (board.last && board.last.cell === move) {
        el("rect", { x: x + 2, y: y + 2, width: cell - 4, height: cell - 4, class: "uttt-last",
                     "data-last": "1" }, svg);
      }
      drawMark(svg, board.cells[b][c], x, y, cell, "");
    }
    if (status === "X" || status === "O") drawMark(svg, status === "X" ? 0 : 1, bx, by, span, " big-mark");
  }
}

function drawMark(svg, owner, x, y, size, extra) {
  if (owner === null || owner === undefined) return;
  const pad = size * 0.2;
  if (owner === 0) {
    el("path", { d: `M${x + pad},${y + pad}L${x + size - pad},${y + size - pad}M${x + size - pad},${y + pad}L${x + pad},${y + size - pad}`,
                 class: "mark-X" + extra, "pointer-events": "none" }, svg);
  } else {
    el("circle", { cx: x + size / 2, cy: y + size / 2, r: size / 2 - pad,
                   class: "mark-O" + extra, "pointer-events": "none" }, svg);
  }
}

// --- controls --------------------------------------------------------------------------------
function wire() {
  for (const button of document.querySelectorAll("#games button")) {
    button.onclick = () => { say(""); send({ cmd: "new", game: button.dataset.game }); };
  }
  $("new-game").onclick = () => { say(""); send({ cmd: "new" }); };
  for (let level = LEVELS; level >= 0; level--) {
    const option = document.createElement("option");
    option.value = String(level);
    option.textContent = level === LEVELS ? `${level} (full strength)` : String(level);
    $("level").appendChild(option);
  }
  $("time-control").onchange = () => {
    $("movetime-label").hidden = $("time-control").value !== "move";
  };
  $("apply-play").onclick = () => {
    const value = $("engine-side").value;
    const seconds = parseFloat($("movetime").value);
    if (!(seconds > 0)) { say("Give the seconds per move as a positive number", "error"); return; }
    const control = $("time-control").value;
    let clock = null;
    if (control !== "move") {
      const [base, increment] = control.split("+").map(Number);
      clock = { base: base * 1000, increment: increment * 1000 };
    }
    say("");
    send({ cmd: "play", side: value === "none" ? null : Number(value),
           movetime: Math.round(seconds * 1000), level: Number($("level").value), clock });
  };
  $("graph").addEventListener("click", graphClick);
  $("game-over-new").onclick = () => { say(""); send({ cmd: "new" }); };
  $("game-over-close").onclick = () => {
    dismissedEnd = `${state.moves.length}:${state.gameOver}`;
    $("game-over").hidden = true;
  };
  setInterval(() => { if (state && state.clock && state.clock.running !== null) showClocks(); }, 100);
  $("analyse").onclick = () => send({ cmd: "analyse", on: !(state && state.engine.analysing) });
  $("prove").onclick = () => {
    say("");
    if (state && state.proof.running) send({ cmd: "prove", on: false });
    else send({ cmd: "prove", on: true, limit: Number($("prove-limit").value) });
  };
  $("takeback").onclick = () => { say(""); send({ cmd: "undo" }); };
  $("first").onclick = () => send({ cmd: "goto", ply: 0 });
  $("back").onclick = () => state && state.cursor > 0 && send({ cmd: "goto", ply: state.cursor - 1 });
  $("forward").onclick = () => state && state.cursor < state.moves.length &&
    send({ cmd: "goto", ply: state.cursor + 1 });
  $("last").onclick = () => state && send({ cmd: "goto", ply: state.moves.length });
  $("preview-back").onclick = () => send({ cmd: "state" });
  $("load").onclick = () => { say(""); send({ cmd: "load", text: $("load-text").value }); };
  $("copy-fen").onclick = copyFen;
  $("pgn-export").onclick = () => send({ cmd: "pgn_export" });
  $("pgn-import").onclick = () => { say(""); send({ cmd: "pgn_import", pgn: $("pgn").value }); };
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { selectedFrom = chosenPiece = null; say(""); send({ cmd: "state" }); }
  });
}

function copyFen() {
  const text = $("fen").value;
  const done = () => say("Position copied", "note");
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => { selectFen(); });
  } else {
    selectFen();
  }
}

function selectFen() {
  $("fen").select();
  const copied = document.execCommand && document.execCommand("copy");
  say(copied ? "Position copied" : "Press Ctrl-C to copy the selected position", "note");
}

wire();
connect();
