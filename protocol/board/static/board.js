// Mallard's board page: draws what the server describes and sends what is clicked.
// It holds no rules: the legal click targets, the move texts, results and FENs all come from the
// server's `state` messages; a click the server refuses comes back as an `error` message.
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
  const game = new URLSearchParams(location.search).get("game") || "duck";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws?game=${encodeURIComponent(game)}`);
  socket.onopen = () => { $("connection").textContent = "connected"; };
  socket.onclose = () => { $("connection").textContent = "disconnected: reload the page"; };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
}

function receive(message) {
  if (message.type === "state") {
    const moved = !state || state.fen !== message.fen || state.variant !== message.variant;
    state = message;
    if (moved) { lines = {}; linesSearch = null; verdict = ""; }
    selectedFrom = chosenPiece = null;
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
  showMoves();
  draw(shownBoard);
  showAnalysis();
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
    list.appendChild(item);
  });
}

// --- analysis --------------------------------------------------------------------------------
function receiveInfo(info) {
  if (!state || info.fen !== state.fen) return;  // for another position
  if (info.string) {
    if (info.string.startsWith("proven")) { verdict = `Prover: ${info.string}`; showAnalysis(); }
    return;
  }
  if (!info.score) return;
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
  svg.setAttribute("width", 8 * size + 16);
  svg.setAttribute("height", 8 * size + 16);
  const live = board === (state && state.board);
  const targets = live ? duckTargets(board) : { from: new Set(), to: new Set(), ducks: new Set() };
  for (let rank = 0; rank < 8; rank++) {
    for (let file = 0; file < 8; file++) {
      const name = "abcdefgh"[file] + (rank + 1);
      const x = 16 + (flipped() ? 7 - file : file) * size;
      const y = (flipped() ? rank : 7 - rank) * size;
      let cls = "square " + ((rank + file) % 2 ? "light" : "dark");
      if (name === selectedFrom) cls += " selected";
      else if (targets.ducks.has(name)) cls += " duck-target";
      else if (targets.to.has(name)) cls += " target";
      const square = el("rect", { x, y, width: size, height: size, class: cls,
                                  "data-square": name }, svg);
      square.addEventListener("click", () => clickDuck(name));
      const piece = board.squares[name];
      if (piece) {
        const white = piece === piece.toUpperCase();
        const glyph = el("text", { x: x + size / 2, y: y + size * 0.8, "font-size": size * 0.8,
                                   "text-anchor": "middle",
                                   class: "piece " + (white ? "white" : "black") }, svg);
        glyph.textContent = GLYPHS[piece.toLowerCase()];
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
  el("ellipse", { cx: x + size * 0.45, cy: y + size * 0.62, rx: size * 0.3, ry: size * 0.2,
                  fill: "#ffd600", stroke: "#7a5a00" }, group);
  el("circle", { cx: x + size * 0.66, cy: y + size * 0.36, r: size * 0.14, fill: "#ffd600",
                 stroke: "#7a5a00" }, group);
  el("polygon", { points: `${x + size * 0.78},${y + size * 0.34} ${x + size * 0.95},${y + size * 0.4} ${x + size * 0.78},${y + size * 0.44}`,
                  fill: "#ff8f00" }, group);
  el("circle", { cx: x + size * 0.69, cy: y + size * 0.33, r: size * 0.025, fill: "#000" }, group);
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
  svg.setAttribute("width", width);
  svg.setAttribute("height", height + top + bottom);
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
  svg.setAttribute("width", total);
  svg.setAttribute("height", total);
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
  $("apply-play").onclick = () => {
    const value = $("engine-side").value;
    const seconds = parseFloat($("movetime").value);
    if (!(seconds > 0)) { say("Give the seconds per move as a positive number", "error"); return; }
    say("");
    send({ cmd: "play", side: value === "none" ? null : Number(value),
           movetime: Math.round(seconds * 1000) });
  };
  $("analyse").onclick = () => send({ cmd: "analyse", on: !(state && state.engine.analysing) });
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
