// The HTML report's script (docs/HTML_REPORT.md): reads the report's JSON embedded next to it
// and draws the page. Every string in the data came from a trace or a program and is hostile: it
// reaches the page only through textContent and canvas text, never as markup.
//
// What it drew is published on the report's root element for tests and tools:
// data-status ("ready" or "failed"), data-drawn-bins, data-drawn-gaps, data-drawn-steps,
// data-drawn-tracks (metric and demand tracks drawn under the devices' timelines),
// data-drawn-demand-tracks (of those, the requests-in-flight tracks),
// data-errors (script errors seen) and data-render-ms.
(function () {
  'use strict';
  var root = document.currentScript ? document.currentScript.parentNode : null;
  if (!root) return;
  var started = performance.now();
  var fallback = root.querySelector('.gpuidle-fallback');
  if (fallback) fallback.parentNode.removeChild(fallback);
  var errors = [];
  function noteError(message) {
    errors.push(String(message));
    if (root.getAttribute('data-status') !== 'ready') root.setAttribute('data-status', 'failed');
    root.setAttribute('data-errors', String(errors.length));
    var box = root.querySelector('.errors');
    if (!box) {
      box = el('div', 'errors');
      root.insertBefore(box, root.firstChild);
    }
    box.textContent = 'The page hit errors: ' + errors.join('; ');
  }
  window.addEventListener('error', function (e) { noteError(e.message || 'error'); });
  root.setAttribute('data-errors', '0');

  // Colours of the causes, busy time, waiting for peers and one-off time: the one home of the
  // page's palette (canvas and swatches alike), in the families of the trace and the terminal:
  // reds for data-starved, blues for launch-bound, yellows for sync-bound, magenta for waiting
  // for peers (busy, yet no work done), grey for no evidence.
  var CAUSES = ['data_starved', 'launch_bound', 'sync_bound', 'unattributed'];
  var COLOR = {
    busy: '#2a9d8f',
    waiting: '#a8329e',
    data_starved: '#d62728',
    launch_bound: '#1f77b4',
    sync_bound: '#e6a800',
    unattributed: '#8d99ae',
    one_off: '#cfd8e3',
    untraced: '#ffffff',
    track_clock: '#6a4c93',
    track_power: '#e76f51',
    track_sm: '#264653',
    track_tensor: '#8ab17d',
    track_dram: '#457b9d',
    track_demand: '#b5651d'
  };
  var LABEL = {
    busy: 'busy',
    waiting: 'waiting for peers',
    data_starved: 'data-starved',
    launch_bound: 'launch-bound',
    sync_bound: 'sync-bound',
    unattributed: 'unattributed',
    one_off: 'start-up, wind-down, one-off',
    track_demand: 'requests in flight'
  };
  var COMM_WAIT = 'sync_bound.comm_wait';  // the subcause that waiting for peers is lost time of
  var OF_STEADY = 'of the steady state';   // what every share of a cause or a fix is of
  var MAX_ROWS = 200;  // rows of a table: a 100k-gap report must not become 100k DOM nodes
  var MAX_NAME = 56;   // characters of a name in a table cell; longer ones are elided in the middle

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : 0; }
  function known(v) { return v !== null && v !== undefined; }
  function fmtNs(ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return 'n/a';
    var a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + ' ns';
    if (a < 1e6) return (ns / 1e3).toPrecision(3) + ' \u00b5s';
    if (a < 1e9) return (ns / 1e6).toPrecision(3) + ' ms';
    if (a < 6e10) return (ns / 1e9).toPrecision(3) + ' s';
    return (ns / 6e10).toPrecision(3) + ' min';
  }
  // Milliseconds without the unit, for axes that name it once ("12.5").
  function msValue(ns) {
    var v = num(ns) / 1e6;
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 0.1 || a === 0 ? v.toFixed(2)
                                                                       : v.toPrecision(2);
  }
  function pct(x) { return isFinite(x) ? (100 * x).toFixed(1) + '%' : 'n/a'; }
  // A threshold as people write it: "5%", "2.5%".
  function pctShort(x) { return isFinite(x) ? String(Math.round(1000 * x) / 10) + '%' : 'n/a'; }
  function share(part, whole) { return whole > 0 ? part / whole : 0; }
  function swatch(color) {
    var s = el('span', 'swatch');
    s.style.background = color;
    return s;
  }
  function causeOf(subcause) { return String(subcause || '').split('.')[0]; }
  // Waiting for peers has its own colour wherever it is drawn, though it counts as sync-bound.
  function colorOf(subcause) {
    if (String(subcause) === COMM_WAIT) return COLOR.waiting;
    return COLOR[causeOf(subcause)] || COLOR.unattributed;
  }
  function deviceName(d) {
    return (known(d.rank) ? 'rank ' + d.rank + ' ' : '') + 'GPU ' + d.device;
  }
  function keyOf(x) { return String(x.rank) + ':' + String(x.device); }
  // A long name (a kernel's template arguments) on one line: its start and its end, the whole
  // name in the hover (title). Counted in code points, so that no character is cut in two.
  function elided(text, max) {
    var s = String(text === null || text === undefined ? '' : text);
    var chars = Array.from(s);
    var limit = max || MAX_NAME;
    var span = el('span', 'elided');
    if (chars.length <= limit) {
      span.textContent = s;
      return span;
    }
    var head = Math.ceil((limit - 1) * 0.6), tail = limit - 1 - head;
    span.textContent = chars.slice(0, head).join('') + '\u2026' + chars.slice(chars.length - tail).join('');
    span.setAttribute('title', s);
    return span;
  }
  // A kernel as the text outputs show it: "void ns::kernel<T>(int, float*)" -> "ns::kernel<T>"
  // (the signature says little here; the hover keeps it).
  function kernelName(name) {
    var s = String(name === null || name === undefined ? '' : name);
    if (s.indexOf('void ') === 0) s = s.slice(5);
    var depth = 0;
    for (var i = 1; i < s.length; ++i) {
      var c = s.charAt(i);
      if (c === '<') ++depth;
      if (c === '>') --depth;
      if (c === '(' && depth === 0 && s.indexOf('(anonymous namespace)', i) !== i) return s.slice(0, i);
    }
    return s;
  }
  // A kernel's name in a table cell: shown as the text outputs show it, elided in the middle,
  // the whole name in the hover.
  function kernelCell(name) {
    var full = String(name === null || name === undefined ? '' : name);
    var span = elided(kernelName(full));
    if (full !== span.textContent) span.setAttribute('title', full);
    return span;
  }
  function legend(parent, keys, notes) {
    var l = add(parent, el('div', 'legend'));
    keys.forEach(function (k) {
      var item = add(l, el('span', 'item'));
      item.setAttribute('data-key', k);
      item.appendChild(swatch(COLOR[k]));
      item.appendChild(document.createTextNode(LABEL[k] + (notes && notes[k] ? ' ' + notes[k] : '')));
    });
    return l;
  }
  // A table of at most MAX_ROWS rows; the rest is counted in a note.
  function table(parent, headers, rows, numeric, total) {
    var t = add(parent, el('table'));
    var head = add(add(t, el('thead')), el('tr'));
    headers.forEach(function (h, i) { add(head, el('th', numeric[i] ? 'num' : '', h)); });
    var body = add(t, el('tbody'));
    rows.slice(0, MAX_ROWS).forEach(function (r) {
      var tr = add(body, el('tr'));
      r.forEach(function (cell, i) {
        if (cell instanceof Node) {
          add(add(tr, el('td', numeric[i] ? 'num' : 'text')), cell);
        } else {
          add(tr, el('td', numeric[i] ? 'num' : 'text', cell));
        }
      });
    });
    var all = total !== undefined ? total : rows.length;
    if (all > Math.min(rows.length, MAX_ROWS)) {
      add(parent, el('div', 'note', (all - Math.min(rows.length, MAX_ROWS)) +
                                     ' more not shown (the JSON report lists them).'));
    }
    return t;
  }
  function causeCell(subcause) {
    var span = el('span', 'nowrap');
    span.appendChild(swatch(colorOf(subcause)));
    span.appendChild(document.createTextNode(String(subcause || '')));
    return span;
  }
  // A canvas sized for the screen's pixel density; returns its 2D context in CSS pixels.
  function sizeCanvas(canvas, cssWidth, cssHeight) {
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(cssWidth * ratio));
    canvas.height = Math.max(1, Math.round(cssHeight * ratio));
    canvas.style.height = cssHeight + 'px';
    var ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    return ctx;
  }
  // Where an element lies on the page, "x,y,width,height" in CSS pixels (for tests and tools).
  function rectOf(e) {
    var r = e.getBoundingClientRect();
    return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height].map(function (v) {
      return Math.round(v);
    }).join(',');
  }
  function showTip(tip, plot, x, y, lines) {
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    var left = Math.min(x + 14, Math.max(0, plot.clientWidth - tip.offsetWidth - 4));
    tip.style.left = left + 'px';
    tip.style.top = (y + 14) + 'px';
  }

  var report = JSON.parse(root.querySelector('script.gpuidle-data').textContent);
  // The page's own data (html_writer.cc): the one-off kinds' names, waiting for peers per bin.
  var pageNode = root.querySelector('script.gpuidle-page');
  var page = pageNode ? JSON.parse(pageNode.textContent) : {};
  var devices = report.devices || [];
  var offsets = {};  // rank -> clock offset onto the job's clock (a merge of ranks)
  (report.ranks || []).forEach(function (r) { offsets[String(r.rank)] = num(r.clock_offset_ns); });
  function offsetOf(x) { return offsets[String(x.rank)] || 0; }
  function windowOf(d) {
    var p = d.phases || {};
    var s = p.start_up ? num(p.start_up.start_ns) : num(d.steady_start_ns);
    var e = p.wind_down ? num(p.wind_down.end_ns) : num(d.steady_end_ns);
    return [s + offsetOf(d), e + offsetOf(d)];
  }
  function steadyOf(d) {
    return d.phases && d.phases.steady ? num(d.phases.steady.ns)
                                       : num(d.steady_end_ns) - num(d.steady_start_ns);
  }
  function waitOf(x) { return known(x.comm_wait_ns) ? num(x.comm_wait_ns) : 0; }
  // A one-off kind as the text outputs name it ("set-up", "CUDA init").
  function oneOffLabel(kind, steady) {
    var names = (steady ? page.steady_one_off_labels : page.one_off_labels) || {};
    return names[kind] || String(kind).replace(/_/g, ' ');
  }
  // Lost time (docs/HTML_REPORT.md): idle time, plus waiting for peers inside collectives, which
  // is lost time of sync_bound.comm_wait; every share of it is of the steady state.
  function lostBySubcause(x) {
    var lost = {};
    Object.keys(x.idle_by_subcause || {}).forEach(function (k) { lost[k] = num(x.idle_by_subcause[k]); });
    lost[COMM_WAIT] = (lost[COMM_WAIT] || 0) + waitOf(x);
    return lost;
  }
  function lostByCause(x) {
    var lost = {};
    CAUSES.forEach(function (c) { lost[c] = num(x.idle_by_cause && x.idle_by_cause[c]); });
    lost.sync_bound += waitOf(x);
    return lost;
  }

  // ---- totals over the devices --------------------------------------------------------------
  var steadyNs = 0, busyNs = 0, idleNs = 0, waitNs = 0, waitKnown = false, commNs = 0;
  var lostCause = {}, lostSub = {};
  CAUSES.forEach(function (c) { lostCause[c] = 0; });
  var rankSet = {};
  (report.ranks || []).forEach(function (r) { rankSet[String(r.rank)] = true; });
  devices.forEach(function (d) {
    steadyNs += steadyOf(d);
    busyNs += num(d.busy_ns);
    idleNs += num(d.idle_ns);
    commNs += num(d.comm_ns);
    if (known(d.rank)) rankSet[String(d.rank)] = true;
    var byCause = lostByCause(d);
    CAUSES.forEach(function (c) { lostCause[c] += byCause[c]; });
    var bySub = lostBySubcause(d);
    Object.keys(bySub).forEach(function (k) { lostSub[k] = (lostSub[k] || 0) + bySub[k]; });
    if (known(d.comm_wait_ns)) {
      waitKnown = true;
      waitNs += num(d.comm_wait_ns);
    }
  });
  var lostNs = idleNs + waitNs;
  // Peers are a matter only for a job of several ranks, or a process that communicated.
  var showPeers = Object.keys(rankSet).length >= 2 || commNs > 0 || waitKnown;
  var verdict = report.verdict && typeof report.verdict === 'object' ? report.verdict : null;
  var nothingToFix = verdict !== null && verdict.worth_fixing === false;
  var gpus = devices.length === 1 ? 'the GPU' : 'the GPUs';

  // ---- header, summary cards ---------------------------------------------------------------
  if (root.parentNode === document.body) {  // a page of its own, not a notebook's output
    document.title = 'gpuidle report' + (report.inputs && report.inputs.length ?
                                             ': ' + String(report.inputs[0]) : '');
  }
  add(root, el('h1', '', devices.length === 1 ? 'Why the GPU was idle' : 'Why the GPUs were idle'));
  var inputs = (report.inputs || []).map(String);
  add(root, el('div', 'meta',
               (inputs.length ? inputs.slice(0, 5).join(', ') +
                                    (inputs.length > 5 ? ' and ' + (inputs.length - 5) + ' more' : '') + ' \u2014 '
                              : '') +
                   String(report.source || '') + ', ' + String(report.generator || '') +
                   ', window ' + fmtNs(num(report.window && report.window.end_ns) -
                                       num(report.window && report.window.start_ns))));
  var cards = add(root, el('div', 'cards'));
  // A card: a label, a value (with the unit its share is of, if any) and a line of detail.
  function card(label, value, unit, detail, color, cls) {
    var c = add(cards, el('div', 'card' + (cls ? ' ' + cls : '')));
    var l = add(c, el('div', 'label'));
    if (color) l.appendChild(swatch(color));
    l.appendChild(document.createTextNode(label));
    var v = add(c, el('div', 'value', value));
    if (unit) add(v, el('span', 'unit', ' ' + unit));
    if (detail) add(c, el('div', 'detail', detail));
    return c;
  }
  card('busy (steady state)', pct(share(busyNs, steadyNs)), OF_STEADY,
       fmtNs(busyNs) + ' of ' + fmtNs(steadyNs) + ' over ' + devices.length + ' device(s)' +
           (waitNs > 0 ? '; of it waiting for peers ' + fmtNs(waitNs) + ' (no work done)' : ''),
       COLOR.busy);
  card(waitNs > 0 ? 'lost (idle + waiting for peers)' : 'lost (idle)', pct(share(lostNs, steadyNs)),
       OF_STEADY, fmtNs(lostNs) + (waitNs > 0 ? ': idle ' + fmtNs(idleNs) + ', waiting ' + fmtNs(waitNs) : ''));
  CAUSES.forEach(function (c) {
    var detail = fmtNs(lostCause[c]) + ' lost';
    if (c === 'sync_bound' && waitNs > 0) detail += ', of it waiting for peers ' + fmtNs(waitNs);
    if (c === 'unattributed') detail += ' (no evidence in the trace)';
    var k = card(LABEL[c], pct(share(lostCause[c], steadyNs)), OF_STEADY, detail, COLOR[c], 'cause');
    k.setAttribute('data-cause', c);
  });
  if (showPeers) {
    var pc = card('waiting for peers', waitKnown ? pct(share(waitNs, steadyNs)) : 'not known',
                  waitKnown ? OF_STEADY : '',
                  waitKnown ? fmtNs(waitNs) + ' inside collectives: busy, yet no work done ' +
                                  '(counted as sync-bound, sync_bound.comm_wait)'
                            : 'needs the traces or reports of all ranks, merged',
                  COLOR.waiting, 'peers');
    pc.setAttribute('data-cause', 'waiting');
  }
  if (report.start_up) {
    var parts = (report.start_up.parts || []).slice(0, 3).map(function (p) {
      return oneOffLabel(p.kind, false) + ' ' + fmtNs(num(p.ns));
    });
    card('start-up (reported apart)', fmtNs(num(report.start_up.ns)), '',
         deviceName(report.start_up) + (parts.length ? ': ' + parts.join(', ') : ''),
         COLOR.one_off);
  }
  function gainText(a) {
    if (known(a.gain_per_step_ns)) {
      var s = 'up to ' + fmtNs(num(a.gain_per_step_ns)) + '/step';
      if (known(a.gain_share_of_step)) s += ' (' + pct(num(a.gain_share_of_step)) + ' of step time)';
      return s;
    }
    if (num(a.gain_ns) > 0) return 'up to ' + fmtNs(num(a.gain_ns)) + ' in all';
    return '';
  }
  // A fix's share of the steady state: the report's, else its subcause's lost time over it (a
  // report of an older gpuidle).
  function adviceShare(a) {
    if (typeof a.share_of_steady_state === 'number') return a.share_of_steady_state;
    return share(lostSub[String(a.subcause)] || 0, steadyNs);
  }
  var nothingText = '';
  if (nothingToFix) {
    nothingText = 'Nothing worth fixing here: ' + gpus + ' lost ' + pct(num(verdict.lost_share)) +
                  ' of the steady state (' + fmtNs(num(verdict.lost_ns)) + ' of ' +
                  fmtNs(num(verdict.steady_ns)) + '), below the ' +
                  pctShort(num(verdict.threshold_share)) + ' threshold';
    var nc = add(cards, el('div', 'card verdict'));
    add(nc, el('div', 'label', 'verdict'));
    add(nc, el('div', 'value', 'Nothing worth fixing here'));
    add(nc, el('div', 'detail', nothingText));
  } else {
    (report.advice || []).slice(0, 6).forEach(function (a) {
      var g = gainText(a);
      var s = pct(adviceShare(a));
      card('fix ' + String(a.subcause || ''), g || s, g ? '' : OF_STEADY,
           g ? s + ' ' + OF_STEADY : '', colorOf(a.subcause), 'fix');
    });
  }

  // ---- lost time by cause -------------------------------------------------------------------
  add(root, el('h2', '', 'Lost time by cause'));
  add(root, el('div', 'note', 'Steady state, all devices: idle time by cause' +
                                  (waitNs > 0 ? ', and waiting for peers inside collectives ' +
                                                    '(sync_bound.comm_wait)' : '') +
                                  '; shares of the steady state (' + fmtNs(steadyNs) + ').'));
  var causeOrder = CAUSES.slice().sort(function (a, b) { return lostCause[b] - lostCause[a]; });
  table(root, ['cause', 'lost (ms)', '% of the steady state', 'subcauses (ms)'],
        causeOrder.filter(function (c) { return lostCause[c] > 0; }).map(function (c) {
          var subs = Object.keys(lostSub).filter(function (k) {
            return causeOf(k) === c && k !== 'unattributed' && lostSub[k] > 0;
          }).sort(function (a, b) { return lostSub[b] - lostSub[a]; }).map(function (k) {
            return k.split('.').slice(1).join('.') + ' ' + msValue(lostSub[k]);
          });
          var cell = el('span');
          cell.appendChild(swatch(COLOR[c]));
          cell.appendChild(document.createTextNode(LABEL[c]));
          return [cell, msValue(lostCause[c]), pct(share(lostCause[c], steadyNs)),
                  c === 'unattributed' ? 'no evidence in the trace' : subs.join(', ')];
        }),
        [false, true, true, false]).className = 'causes';
  if (!(lostNs > 0)) add(root, el('div', 'note', 'No time was lost in the steady state.'));

  // ---- timeline -----------------------------------------------------------------------------
  add(root, el('h2', '', 'Timeline'));
  add(root, el('div', 'note',
               'Each device\'s whole window, binned (upper band: what each stretch was spent on) ' +
                   'with the longest gaps exactly, by cause (lower band). Wheel: zoom, drag: pan.'));
  // Waiting for peers per bin. A merge of ranks knows each step's wait (steps[].comm_wait_ns) and
  // the device's in all, not each collective's: a step's wait is spread over its busy time in
  // the bins (its share of the step's busy time), and what no listed step holds over the steady
  // state's remaining busy time alike. Busy time in the bins holds it; it is drawn apart.
  var stepsOf = {};
  (report.steps || []).forEach(function (s) {
    var k = keyOf(s);
    (stepsOf[k] = stepsOf[k] || []).push(s);
  });
  var waitingBy = {perStep: false, total: false};
  function waitingBinsOf(d) {
    var tl = d.timeline;
    var total = waitOf(d);
    if (!(total > 0) || !tl || !(num(tl.bin_ns) > 0)) return null;
    var bin = num(tl.bin_ns), start = num(tl.start_ns), busy = tl.busy_ns || [], n = busy.length;
    function zeros() {
      var z = [];
      for (var i = 0; i < n; ++i) z.push(0);
      return z;
    }
    // Adds weight(j) times the part of bin j that [s, e) covers to into[j].
    function spread(into, s, e, weight) {
      var first = Math.max(0, Math.floor((s - start) / bin));
      var last = Math.min(n - 1, Math.floor((e - 1 - start) / bin));
      for (var j = first; j <= last; ++j) {
        var b0 = start + j * bin;
        var part = (Math.min(e, b0 + bin) - Math.max(s, b0)) / bin;
        if (part > 0) into[j] += weight(j) * part;
      }
    }
    var out = zeros(), placed = 0;
    (stepsOf[keyOf(d)] || []).forEach(function (s) {
      var w = Math.min(waitOf(s), num(s.busy_ns));
      if (!(w > 0)) return;
      spread(out, num(s.start_ns), num(s.end_ns), function (j) { return num(busy[j]) * w / num(s.busy_ns); });
      placed += w;
      waitingBy.perStep = true;
    });
    var rest = total - placed;
    if (rest > total * 0.01) {
      // The steady state's busy time that no step's wait took, given its share of the rest.
      var free = zeros(), freeNs = 0;
      spread(free, num(d.steady_start_ns), num(d.steady_end_ns), function (j) {
        return Math.max(0, num(busy[j]) - out[j]);
      });
      free.forEach(function (v) { freeNs += v; });
      var ratio = freeNs > 0 ? Math.min(1, rest / freeNs) : 0;
      for (var k = 0; k < n; ++k) out[k] += free[k] * ratio;
      waitingBy.total = true;
    }
    for (var z = 0; z < n; ++z) out[z] = Math.min(out[z], num(busy[z]));
    return out;
  }
  var waitingByDevice = {};
  devices.forEach(function (d) {
    var w = waitingBinsOf(d);
    if (w) waitingByDevice[keyOf(d)] = w;
  });
  var timelineNotes = {};
  if (waitNs > 0) {
    timelineNotes.waiting =
        waitingBy.perStep && !waitingBy.total
            ? '(each step\u2019s wait spread over its busy time: the report has each step\u2019s ' +
                  'wait, not each collective\u2019s)'
            : waitingBy.perStep
                  ? '(each step\u2019s wait spread over its busy time, the rest over the steady ' +
                        'state\u2019s: the report has each step\u2019s wait and the device\u2019s ' +
                        'total, not each collective\u2019s)'
                  : '(the device\u2019s total spread over its steady state\u2019s busy time: the ' +
                        'report has only totals)';
  }
  // The demand track's entry, where some device has one (its band is labelled on the left too).
  var anyDemand = devices.some(function (d) {
    return d.timeline && Array.isArray(d.timeline.in_flight_ns);
  });
  if (anyDemand) {
    timelineNotes.track_demand = '(the band under a row: mean requests in flight per bin; the GPU ' +
                                 'idle with none in flight had no demand)';
  }
  legend(root, ['busy'].concat(waitNs > 0 ? ['waiting'] : []).concat(CAUSES).concat(['one_off'])
                   .concat(anyDemand ? ['track_demand'] : []),
         timelineNotes).className = 'legend timeline-legend';
  var toolbar = add(root, el('div', 'toolbar'));
  var reset = add(toolbar, el('button', '', 'reset zoom'));
  reset.type = 'button';
  var viewLabel = add(toolbar, el('span', 'meta'));
  var tPlot = add(root, el('div', 'plot'));
  var tCanvas = add(tPlot, el('canvas', 'timeline'));
  tCanvas.setAttribute('role', 'img');
  tCanvas.setAttribute('aria-label', 'timeline of each device: busy, waiting for peers and idle ' +
                                         'time by cause');
  var tTip = add(tPlot, el('div', 'tooltip'));

  var gapsByDevice = {};
  (report.longest_gaps || []).forEach(function (g) {
    var k = keyOf(g);
    (gapsByDevice[k] = gapsByDevice[k] || []).push(g);
  });
  Object.keys(gapsByDevice).forEach(function (k) {
    gapsByDevice[k].sort(function (a, b) { return num(a.start_ns) - num(b.start_ns); });
  });
  var full = [Infinity, -Infinity];
  devices.forEach(function (d) {
    var w = windowOf(d);
    full[0] = Math.min(full[0], w[0]);
    full[1] = Math.max(full[1], w[1]);
  });
  if (!(full[1] > full[0])) full = [0, 1];
  var view = [full[0], full[1]];
  var standalone = root.parentNode === document.body;  // not a notebook's output
  // A page of its own opens at the range its address names, "#zoom=10-25.5" (ms from the start
  // of the run), and keeps the address in step with the view, so that a view can be shared.
  if (standalone) {
    var z = /[#&]zoom=([0-9.]+)-([0-9.]+)/.exec(location.hash || '');
    if (z && parseFloat(z[2]) > parseFloat(z[1])) {
      view = [Math.max(full[0], full[0] + parseFloat(z[1]) * 1e6),
              Math.min(full[1], full[0] + parseFloat(z[2]) * 1e6)];
      if (!(view[1] > view[0])) view = [full[0], full[1]];
    }
  }
  var addressTimer = null;
  function noteView() {
    var from = (view[0] - full[0]) / 1e6, to = (view[1] - full[0]) / 1e6;
    root.setAttribute('data-view-ms', from.toFixed(3) + '-' + to.toFixed(3));
    if (!standalone || !history.replaceState) return;
    // Once the view rests: browsers throttle (and warn about) an address changed on every frame.
    clearTimeout(addressTimer);
    addressTimer = setTimeout(function () {
      var whole = view[0] === full[0] && view[1] === full[1];
      try {
        history.replaceState(null, '', whole ? location.pathname + location.search :
                                               '#zoom=' + from.toFixed(3) + '-' + to.toFixed(3));
      } catch (e) { /* some viewers forbid it: the view still works */ }
    }, 400);
  }
  var LABEL_W = 150;
  // Rows tall enough to read, with the device's name and its lost share beside them; a job of
  // many devices shrinks them to fit about 720 px.
  var rowH = devices.length <= 16 ? 54 : devices.length <= 24 ? 40 :
                                         Math.max(3, Math.floor(720 / devices.length));
  var split = rowH >= 20;  // bins above, gaps below; else gaps drawn over the bins
  var drawnBins = 0, drawnGaps = 0, drawnWaitingBins = 0, drawnTracks = 0, drawnDemandTracks = 0;

  // Tracks under a device's row. A serving process's demand (timeline.in_flight_ns): the mean
  // requests in flight per bin against the most in any bin, so that idle time with no demand
  // shows as such. Where a live capture read the device (timeline.gpu): per bin, the SM clock
  // against its maximum, the power against its limit, and PM sampling's SM, tensor and DRAM
  // activity. A bin without readings is left blank. None in rows too thin to read.
  var TRACK_H = 14;
  // A bin's traced time: what its columns hold (the rest of it was not traced).
  function tracedOf(tl, i) {
    var t = num((tl.busy_ns || [])[i]) + num((tl.one_off_ns || [])[i]);
    CAUSES.forEach(function (c) { t += num(((tl.idle_ns || {})[c] || [])[i]); });
    return t;
  }
  function fmtInFlight(v) { return v >= 10 ? String(Math.round(v)) : v.toFixed(1); }
  function tracksOf(d) {
    var tl = d.timeline;
    if (!tl || !split) return [];
    var out = [];
    function track(key, label, values, scale, text, top) {
      var any = values.some(function (v) { return v !== null; });
      if (any && scale > 0) {
        out.push({key: key, label: label, values: values, scale: scale, text: text, top: top});
      }
    }
    function maxOf(values) {
      return values.reduce(function (m, v) { return v !== null && v > m ? v : m; }, 0);
    }
    if (Array.isArray(tl.in_flight_ns)) {
      var flight = tl.in_flight_ns.map(function (v, i) {
        var traced = tracedOf(tl, i);
        return traced > 0 ? num(v) / traced : null;
      });
      // At least one request on the scale: a window without any in flight draws an empty band.
      track('demand', LABEL.track_demand, flight, Math.max(1, maxOf(flight)),
            function (v, scale) { return fmtInFlight(v) + ' of at most ' + fmtInFlight(scale); },
            function (scale) { return fmtInFlight(scale) + ' req'; });
    }
    var g = tl.gpu;
    if (!g) return out;
    var samples = g.samples || [];
    function nvml(col) {
      return (g[col] || []).map(function (v, i) { return num(samples[i]) > 0 && num(v) > 0 ? num(v) : null; });
    }
    function pm(col) {
      return (g[col] || []).map(function (v) { return typeof v === 'number' && v >= 0 ? v : null; });
    }
    var clock = nvml('sm_clock_mhz'), power = nvml('power_mw');
    track('clock', 'SM clock', clock, Math.max(num(g.sm_clock_max_mhz), maxOf(clock)),
          function (v, scale) { return Math.round(v) + ' of ' + Math.round(scale) + ' MHz'; });
    track('power', 'power', power, Math.max(num(g.power_limit_mw), maxOf(power)),
          function (v, scale) { return Math.round(v / 1000) + ' of ' + Math.round(scale / 1000) + ' W'; });
    function percent(v) { return v.toFixed(1) + '%'; }
    track('sm', 'SM active', pm('sm_active_pct'), 100, percent);
    track('tensor', 'tensor active', pm('tensor_active_pct'), 100, percent);
    track('dram', 'DRAM', pm('dram_pct'), 100, percent);
    return out;
  }
  var tracksByRow = devices.map(tracksOf);
  // Each device's row: its top and height (the bins and gaps, then its tracks).
  var rowTop = [], rowsH = 0;
  devices.forEach(function (d, row) {
    rowTop.push(rowsH);
    rowsH += rowH + tracksByRow[row].length * TRACK_H;
  });

  function drawTimeline() {
    var width = Math.max(300, tPlot.clientWidth || 900);
    var height = Math.max(rowH, rowsH) + 22;
    var ctx = sizeCanvas(tCanvas, width, height);
    var plotW = width - LABEL_W - 8;
    var span = view[1] - view[0];
    function x(t) { return LABEL_W + (t - view[0]) / span * plotW; }
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, height);
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    drawnBins = 0;
    drawnGaps = 0;
    drawnTracks = 0;
    drawnDemandTracks = 0;
    devices.forEach(function (d, row) {
      var y0 = rowTop[row] + 1;
      var binH = split ? rowH - 16 : rowH - 1;
      var off = offsetOf(d);
      if (rowH >= 36) {
        ctx.fillStyle = '#1d2433';
        ctx.font = '12px sans-serif';
        ctx.fillText(deviceName(d).slice(0, 24), 4, y0 + binH / 2 - 6);
        ctx.fillStyle = '#5a6478';
        ctx.font = '10px sans-serif';
        var steadyD = steadyOf(d);
        ctx.fillText(steadyD > 0 ? 'lost ' + pct(share(num(d.idle_ns) + waitOf(d), steadyD)) +
                                       ' of steady state' : '', 4, y0 + binH / 2 + 8);
        ctx.font = '11px sans-serif';
      } else if (rowH >= 12) {
        ctx.fillStyle = '#1d2433';
        ctx.fillText(deviceName(d).slice(0, 24), 4, y0 + rowH / 2);
      }
      var tl = d.timeline;
      if (tl && num(tl.bin_ns) > 0) {
        var bin = num(tl.bin_ns), start = num(tl.start_ns) + off;
        var waiting = waitingByDevice[keyOf(d)] || [];
        var busyCol = tl.busy_ns || [];
        var workCol = [], waitCol = [];
        for (var k = 0; k < busyCol.length; ++k) {
          var wk = Math.min(num(waiting[k]), num(busyCol[k]));
          waitCol.push(wk);
          workCol.push(num(busyCol[k]) - wk);
        }
        var cols = [['busy', workCol], ['waiting', waitCol]];
        CAUSES.forEach(function (c) { cols.push([c, (tl.idle_ns || {})[c] || []]); });
        cols.push(['one_off', tl.one_off_ns || []]);
        var n = busyCol.length;
        var first = Math.max(0, Math.floor((view[0] - start) / bin));
        var last = Math.min(n - 1, Math.ceil((view[1] - start) / bin));
        for (var i = first; i <= last; ++i) {
          // Whole pixels: columns that meet without seams of blended colour between them.
          var bx0 = Math.round(Math.max(LABEL_W, x(start + i * bin)));
          var bx1 = Math.round(Math.min(LABEL_W + plotW, x(start + (i + 1) * bin)));
          if (bx1 <= bx0) {
            if (x(start + (i + 1) * bin) <= LABEL_W || x(start + i * bin) >= LABEL_W + plotW) continue;
            bx1 = bx0 + 1;  // narrower than a pixel: drawn, and overdrawn by the next
          }
          var w = bx1 - bx0;
          var y = y0 + binH;
          for (var c = 0; c < cols.length; ++c) {
            var h = num(cols[c][1][i]) / bin * binH;
            if (h <= 0) continue;
            ctx.fillStyle = COLOR[cols[c][0]];
            ctx.fillRect(bx0, y - h, w, h);
            y -= h;
          }
          if (waitCol[i] > 0) ++drawnWaitingBins;
          ++drawnBins;
        }
      }
      var gaps = gapsByDevice[keyOf(d)] || [];
      var gy = split ? y0 + binH + 2 : y0;
      var gh = split ? 10 : binH;
      var lastX = -1, lastColor = '';
      for (var j = 0; j < gaps.length; ++j) {
        var g = gaps[j];
        var s = num(g.start_ns) + off, e = num(g.end_ns) + off;
        if (e < view[0] || s > view[1]) continue;
        var gx0 = Math.max(LABEL_W, x(s)), gx1 = Math.min(LABEL_W + plotW, x(e));
        var color = colorOf(g.subcause);
        ++drawnGaps;
        // Gaps narrower than a pixel that land on the pixel just drawn add nothing to see.
        if (gx1 - gx0 < 1 && Math.floor(gx0) === lastX && color === lastColor) continue;
        ctx.fillStyle = color;
        ctx.fillRect(gx0, gy, Math.max(gx1 - gx0, 1), gh);
        lastX = Math.floor(gx0);
        lastColor = color;
      }
      drawTracks(ctx, d, row, x, plotW);
    });
    // Time axis: from the start of the whole window.
    var axisY = Math.max(rowH, rowsH) + 4;
    ctx.fillStyle = '#5a6478';
    ctx.strokeStyle = '#dde2ea';
    var step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    for (var t = Math.ceil((view[0] - full[0]) / step) * step; full[0] + t <= view[1]; t += step) {
      var tx = x(full[0] + t);
      ctx.beginPath();
      ctx.moveTo(tx, 0);
      ctx.lineTo(tx, axisY);
      ctx.stroke();
      if (tx + 48 < width) ctx.fillText(fmtNs(t), tx + 2, axisY + 8);  // no label cut off
    }
    viewLabel.textContent = ' showing ' + fmtNs(view[0] - full[0]) + ' to ' +
                            fmtNs(view[1] - full[0]) + ' of ' + fmtNs(full[1] - full[0]);
    root.setAttribute('data-drawn-bins', String(drawnBins));
    root.setAttribute('data-drawn-gaps', String(drawnGaps));
    root.setAttribute('data-drawn-waiting-bins', String(drawnWaitingBins));
    root.setAttribute('data-drawn-tracks', String(drawnTracks));
    root.setAttribute('data-drawn-demand-tracks', String(drawnDemandTracks));
    root.setAttribute('data-timeline-rect', rectOf(tCanvas));
    noteView();
  }

  // A device's metric tracks under its bins: a band per track with its label and scale on the
  // left, each bin's figure as a column against the scale.
  function drawTracks(ctx, d, row, x, plotW) {
    var tracks = tracksByRow[row];
    if (!tracks.length) return;
    var tl = d.timeline, bin = num(tl.bin_ns), start = num(tl.start_ns) + offsetOf(d);
    tracks.forEach(function (tr, k) {
      var ty = rowTop[row] + rowH + k * TRACK_H;
      ctx.fillStyle = '#f3f5f8';
      ctx.fillRect(LABEL_W, ty, plotW, TRACK_H - 2);
      ctx.fillStyle = '#5a6478';
      ctx.font = '10px sans-serif';
      ctx.fillText(tr.label, 12, ty + TRACK_H / 2 - 1);
      var top = tr.top ? tr.top(tr.scale) : tr.key === 'clock' ? Math.round(tr.scale) + ' MHz' :
                tr.key === 'power' ? Math.round(tr.scale / 1000) + ' W' : '100%';
      ctx.textAlign = 'right';
      ctx.fillText(top, LABEL_W - 6, ty + TRACK_H / 2 - 1);
      ctx.textAlign = 'left';
      ctx.fillStyle = COLOR['track_' + tr.key];
      var n = tr.values.length;
      var first = Math.max(0, Math.floor((view[0] - start) / bin));
      var last = Math.min(n - 1, Math.ceil((view[1] - start) / bin));
      for (var i = first; i <= last; ++i) {
        var v = tr.values[i];
        if (v === null || (tr.key === 'demand' && v <= 0)) continue;  // no demand: left empty
        var bx0 = Math.round(Math.max(LABEL_W, x(start + i * bin)));
        var bx1 = Math.round(Math.min(LABEL_W + plotW, x(start + (i + 1) * bin)));
        if (bx1 <= bx0) bx1 = bx0 + 1;
        var h = Math.max(1, Math.min(1, v / tr.scale) * (TRACK_H - 2));
        ctx.fillRect(bx0, ty + TRACK_H - 2 - h, bx1 - bx0, h);
      }
      ++drawnTracks;
      if (tr.key === 'demand') ++drawnDemandTracks;
    });
    ctx.font = '11px sans-serif';
  }

  // Where the pointer is: the device row and the time, or null outside the plot.
  function pointAt(ev) {
    var rect = tCanvas.getBoundingClientRect();
    var px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    var plotW = rect.width - LABEL_W - 8;
    if (px < LABEL_W || px > LABEL_W + plotW) return null;
    var row = 0;
    while (row + 1 < rowTop.length && py >= rowTop[row + 1]) ++row;
    if (py < 0 || py >= rowsH) row = -1;
    return {
      row: row,
      track: row >= 0 ? Math.floor((py - rowTop[row] - rowH) / TRACK_H) : -1,
      t: view[0] + (px - LABEL_W) / plotW * (view[1] - view[0]),
      px: px,
      py: py,
      nsPerPx: (view[1] - view[0]) / plotW
    };
  }
  function timelineTip(ev) {
    var p = pointAt(ev);
    if (!p || p.row < 0 || p.row >= devices.length) { tTip.style.display = 'none'; return; }
    var d = devices[p.row];
    var off = offsetOf(d);
    var tr = p.track >= 0 ? tracksByRow[p.row][p.track] : null;
    if (tr) {
      var tb = Math.floor((p.t - off - num(d.timeline.start_ns)) / num(d.timeline.bin_ns));
      var tv = tb >= 0 && tb < tr.values.length ? tr.values[tb] : null;
      showTip(tTip, tPlot, p.px, p.py,
              [deviceName(d) + ', ' + tr.label + ' at ' +
                   fmtNs(tb * num(d.timeline.bin_ns) + num(d.timeline.start_ns) + off - full[0]),
               tv !== null ? tr.text(tv, tr.scale) + ' (mean of the bin)' :
               tr.key === 'demand' ? 'nothing traced in this bin' : 'no readings in this bin']);
      return;
    }
    var gaps = gapsByDevice[keyOf(d)] || [];
    // The gap under the pointer (within two pixels): binary search by start.
    var lo = 0, hi = gaps.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (num(gaps[mid].start_ns) + off <= p.t + 2 * p.nsPerPx) lo = mid + 1; else hi = mid;
    }
    for (var i = lo - 1; i >= 0 && i >= lo - 8; --i) {
      var g = gaps[i];
      if (num(g.end_ns) + off >= p.t - 2 * p.nsPerPx) {
        var lines = [String(g.subcause) + ' \u2014 ' + fmtNs(num(g.end_ns) - num(g.start_ns)),
                     deviceName(d) + ', at ' + fmtNs(num(g.start_ns) + off - full[0])];
        if (g.evidence) lines.push('evidence: ' + String(g.evidence));
        if (g.call_site) lines.push('call site: ' + String(g.call_site));
        if (g.next_op) lines.push('next op: ' + String(g.next_op));
        showTip(tTip, tPlot, p.px, p.py, lines);
        return;
      }
    }
    var tl = d.timeline;
    if (tl && num(tl.bin_ns) > 0) {
      var b = Math.floor((p.t - off - num(tl.start_ns)) / num(tl.bin_ns));
      if (b >= 0 && b < (tl.busy_ns || []).length) {
        var binNs = num(tl.bin_ns);
        var out = [deviceName(d) + ': ' + fmtNs(b * binNs + num(tl.start_ns) + off - full[0]) +
                   ' + ' + fmtNs(binNs)];
        var wb = Math.min(num((waitingByDevice[keyOf(d)] || [])[b]), num(tl.busy_ns[b]));
        out.push('busy ' + fmtNs(num(tl.busy_ns[b]) - wb));
        if (wb > 0) out.push(LABEL.waiting + ' ' + fmtNs(wb) + ' (spread over the step)');
        CAUSES.forEach(function (c) {
          var v = num(((tl.idle_ns || {})[c] || [])[b]);
          if (v > 0) out.push(LABEL[c] + ' ' + fmtNs(v));
        });
        var o = num((tl.one_off_ns || [])[b]);
        if (o > 0) out.push(LABEL.one_off + ' ' + fmtNs(o));
        showTip(tTip, tPlot, p.px, p.py, out);
        return;
      }
    }
    tTip.style.display = 'none';
  }
  var redrawQueued = false;
  function redraw() {
    if (redrawQueued) return;
    redrawQueued = true;
    requestAnimationFrame(function () { redrawQueued = false; drawTimeline(); });
  }
  tCanvas.addEventListener('wheel', function (ev) {
    var p = pointAt(ev);
    if (!p) return;
    ev.preventDefault();
    var factor = Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002)));
    var span = Math.max(1000, Math.min(full[1] - full[0], (view[1] - view[0]) * factor));
    var at = (p.t - view[0]) / (view[1] - view[0]);
    view[0] = Math.max(full[0], p.t - at * span);
    view[1] = Math.min(full[1], view[0] + span);
    view[0] = Math.max(full[0], view[1] - span);
    redraw();
  }, {passive: false});
  var drag = null;
  tCanvas.addEventListener('mousedown', function (ev) {
    drag = {x: ev.clientX, view: view.slice()};
  });
  window.addEventListener('mouseup', function () { drag = null; });
  tCanvas.addEventListener('mousemove', function (ev) {
    if (drag) {
      var plotW = tCanvas.getBoundingClientRect().width - LABEL_W - 8;
      var span = drag.view[1] - drag.view[0];
      var shift = -(ev.clientX - drag.x) / plotW * span;
      shift = Math.max(full[0] - drag.view[0], Math.min(full[1] - drag.view[1], shift));
      view = [drag.view[0] + shift, drag.view[1] + shift];
      tTip.style.display = 'none';
      redraw();
      return;
    }
    timelineTip(ev);
  });
  tCanvas.addEventListener('mouseleave', function () { tTip.style.display = 'none'; });
  reset.addEventListener('click', function () { view = [full[0], full[1]]; redraw(); });

  // ---- steps --------------------------------------------------------------------------------
  add(root, el('h2', '', 'Steps'));
  var stepsByDevice = {};
  (report.steps || []).forEach(function (s) {
    var k = keyOf(s);
    (stepsByDevice[k] = stepsByDevice[k] || []).push(s);
  });
  var stepKeys = devices.map(keyOf).filter(function (k) { return stepsByDevice[k]; });
  var sCanvas = null, sPlot = null, sTip = null, stepSelect = null, buckets = [];
  if (stepKeys.length === 0) {
    add(root, el('div', 'note', 'The run has no steps (mark them with gpuidle.step(), ' +
                                    'torch.profiler steps or NVTX ranges).'));
    root.setAttribute('data-drawn-steps', '0');
  } else {
    add(root, el('div', 'note',
                 'Each step\'s time by what it was spent on (steps from ' +
                     String(report.step_source || 'the trace') + '); many steps are summarised ' +
                     'as the mean of consecutive steps.' +
                     (num(report.steps_not_listed) > 0 ?
                          ' The report lists ' + (report.steps || []).length + ' step rows; ' +
                              report.steps_not_listed + ' more are in the devices\' figures only.' : '')));
    var stepsWait = (report.steps || []).some(function (s) { return waitOf(s) > 0; });
    legend(root, ['busy'].concat(stepsWait ? ['waiting'] : []).concat(CAUSES).concat(['one_off']),
           stepsWait ? {waiting: '(each step\u2019s own wait, as the merge of ranks measured it)'} : {})
        .className = 'legend steps-legend';
    var stepBar = add(root, el('div', 'toolbar'));
    stepSelect = add(stepBar, el('select'));
    stepKeys.forEach(function (k) {
      var d = devices.filter(function (x) { return keyOf(x) === k; })[0];
      var o = add(stepSelect, el('option', '', deviceName(d) + ' (' + stepsByDevice[k].length + ' steps)'));
      o.value = k;
    });
    sPlot = add(root, el('div', 'plot'));
    sCanvas = add(sPlot, el('canvas', 'steps'));
    sCanvas.setAttribute('role', 'img');
    sCanvas.setAttribute('aria-label', 'each step\'s time in ms: busy, waiting for peers and ' +
                                         'idle by cause');
    sTip = add(sPlot, el('div', 'tooltip'));
    stepSelect.addEventListener('change', drawSteps);
    sCanvas.addEventListener('mousemove', function (ev) {
      var rect = sCanvas.getBoundingClientRect();
      var px = ev.clientX - rect.left;
      var b = buckets.filter(function (k) { return px >= k.x0 && px < k.x1; })[0];
      if (!b) { sTip.style.display = 'none'; return; }
      var lines = [b.first === b.last ? String(b.first) : String(b.first) + ' \u2026 ' + String(b.last) +
                                                            ' (mean of ' + b.count + ')',
                   'length ' + fmtNs(b.total), 'busy ' + fmtNs(b.busy)];
      if (b.wait > 0) lines.push(LABEL.waiting + ' ' + fmtNs(b.wait));
      CAUSES.forEach(function (c) { if (b.idle[c] > 0) lines.push(LABEL[c] + ' ' + fmtNs(b.idle[c])); });
      if (b.oneOff > 0) lines.push('one-off ' + fmtNs(b.oneOff));
      showTip(sTip, sPlot, px, ev.clientY - rect.top, lines);
    });
    sCanvas.addEventListener('mouseleave', function () { sTip.style.display = 'none'; });
  }
  function drawSteps() {
    if (!sCanvas) return;
    var steps = stepsByDevice[stepSelect.value] || [];
    var width = Math.max(300, sPlot.clientWidth || 900), height = 240;
    var ctx = sizeCanvas(sCanvas, width, height);
    // Room for the axis's values (ms) on the left, the value above each bar, the steps' names
    // below.
    var left = 64, top0 = 18, plotW = width - left - 8, plotH = height - 54;
    var per = Math.max(1, Math.ceil(steps.length / Math.max(1, Math.floor(plotW / 3))));
    buckets = [];
    for (var i = 0; i < steps.length; i += per) {
      var b = {count: 0, busy: 0, wait: 0, oneOff: 0, total: 0, idle: {}, first: steps[i].name, last: ''};
      CAUSES.forEach(function (c) { b.idle[c] = 0; });
      for (var j = i; j < Math.min(steps.length, i + per); ++j) {
        var s = steps[j];
        var w = Math.min(waitOf(s), num(s.busy_ns));
        b.count++;
        b.busy += num(s.busy_ns) - w;  // busy time that did work: the waiting is drawn apart
        b.wait += w;
        b.oneOff += num(s.one_off_ns);
        b.total += num(s.end_ns) - num(s.start_ns);
        CAUSES.forEach(function (c) { b.idle[c] += num(s.idle_by_cause && s.idle_by_cause[c]); });
        b.last = s.name;
      }
      b.busy /= b.count;
      b.wait /= b.count;
      b.oneOff /= b.count;
      b.total /= b.count;
      CAUSES.forEach(function (c) { b.idle[c] /= b.count; });
      buckets.push(b);
    }
    var top = 0;
    buckets.forEach(function (b) { top = Math.max(top, b.total); });
    if (!(top > 0)) top = 1;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, height);
    var base = top0 + plotH;  // the bars' foot
    function yOf(ns) { return base - ns / top * plotH; }
    // The axis: 0, half and the longest step, in ms, with light rules across.
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    ctx.strokeStyle = '#e7eaf0';
    var axis = [];
    [0, top / 2, top].forEach(function (v) {
      var y = Math.round(yOf(v)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(left - 4, y);
      ctx.lineTo(left + plotW, y);
      ctx.stroke();
      ctx.fillStyle = '#5a6478';
      ctx.textAlign = 'right';
      ctx.fillText(msValue(v) + ' ms', left - 6, y);
      axis.push(msValue(v) + ' ms');
    });
    ctx.textAlign = 'left';
    ctx.fillText('step time (ms)', 2, 8);
    var barW = plotW / Math.max(1, buckets.length);
    var waitingSteps = 0;
    buckets.forEach(function (b, k) {
      b.x0 = left + k * barW;
      b.x1 = b.x0 + barW;
      var y = base;
      var parts = [['busy', b.busy], ['waiting', b.wait]];
      CAUSES.forEach(function (c) { parts.push([c, b.idle[c]]); });
      parts.push(['one_off', b.oneOff]);
      parts.forEach(function (p) {
        var h = p[1] / top * plotH;
        if (h <= 0) return;
        ctx.fillStyle = COLOR[p[0]];
        ctx.fillRect(b.x0, y - h, Math.max(barW - (barW > 4 ? 1 : 0), 0.5), h);
        y -= h;
      });
      if (b.wait > 0) ++waitingSteps;
      // Each bar's length in ms, where there is room for it.
      if (barW >= 34) {
        ctx.fillStyle = '#1d2433';
        ctx.textAlign = 'center';
        ctx.fillText(msValue(b.total), b.x0 + barW / 2, Math.max(8, yOf(b.total) - 7));
        ctx.textAlign = 'left';
      }
    });
    // Below the bars: the first and last step, and how many a bar is.
    ctx.fillStyle = '#5a6478';
    var lastName = buckets.length ? String(buckets[buckets.length - 1].last) : '';
    if (buckets.length) ctx.fillText(String(buckets[0].first).slice(0, 40), left, base + 10);
    ctx.textAlign = 'right';
    if (buckets.length > 1) ctx.fillText(lastName.slice(0, 40), left + plotW, base + 10);
    ctx.textAlign = 'center';
    ctx.fillText(steps.length + ' steps' + (per > 1 ? ', the mean of ' + per + ' per bar' : '') +
                     '; bars: each step\u2019s time in ms by what it was spent on',
                 left + plotW / 2, base + 26);
    ctx.textAlign = 'left';
    root.setAttribute('data-drawn-steps', String(buckets.length));
    root.setAttribute('data-drawn-waiting-steps', String(waitingSteps));
    root.setAttribute('data-steps-axis', axis.join(','));
    root.setAttribute('data-steps-rect', rectOf(sCanvas));
  }

  // ---- advice -------------------------------------------------------------------------------
  add(root, el('h2', '', 'Advice'));
  if (nothingToFix) {
    add(root, el('div', 'verdict', nothingText + '.'));
  } else if (!(report.advice || []).length) {
    add(root, el('div', 'note', 'No advice: little time was lost.'));
  }
  (nothingToFix ? [] : report.advice || []).forEach(function (a) {
    var box = add(root, el('div', 'advice'));
    box.style.borderLeftColor = colorOf(a.subcause);
    var head = add(box, el('div'));
    head.appendChild(causeCell(a.subcause));
    head.appendChild(document.createTextNode(' \u2014 ' + pct(adviceShare(a)) + ' ' + OF_STEADY));
    var g = gainText(a);
    if (g) add(box, el('div', 'gain', 'Predicted gain: ' + g));
    add(box, el('div', '', a.fix));
    if (a.evidence) add(box, el('div', 'note', 'Evidence: ' + String(a.evidence)));
  });

  // ---- periodic work: each activity once, whatever its causes ---------------------------------
  if ((report.periodic_work || []).length) {
    add(root, el('h2', '', 'Periodic work'));
    table(root, ['activity', 'site', 'times', 'each', 'GPU idle', 'by subcause', 'fix'],
          report.periodic_work.map(function (w) {
            var parts = Object.keys(w.idle_by_subcause || {}).filter(function (k) {
              return num(w.idle_by_subcause[k]) > 0;
            }).map(function (k) { return k + ' ' + fmtNs(num(w.idle_by_subcause[k])); });
            var times = num(w.occurrences);
            return [String(w.activity || ''), elided(w.site), String(times),
                    fmtNs(times > 0 ? num(w.span_ns) / times : 0), fmtNs(num(w.idle_ns)),
                    parts.join(', '), String(w.fix || '')];
          }),
          [false, false, true, true, true, false, false]);
  }

  // ---- devices, ranks -----------------------------------------------------------------------
  add(root, el('h2', '', 'Devices'));
  add(root, el('div', 'note', 'Steady state of each device: lost time by cause in ms, and as a share ' +
                                  'of that device\u2019s steady state.'));
  table(root, ['device', 'name', 'busy (% of the steady state)', 'lost'].concat(
                  CAUSES.map(function (c) { return LABEL[c] + ' (% of the steady state)'; }))
                  .concat(showPeers ? ['waiting for peers'] : [])
                  .concat(['start-up', 'steps', 'kernels']),
        devices.map(function (d) {
          var steady = steadyOf(d);
          var byCause = lostByCause(d);
          return [deviceName(d), elided(d.name || '', 40), pct(share(num(d.busy_ns), steady)),
                  fmtNs(num(d.idle_ns) + waitOf(d)) + ' (' + pct(share(num(d.idle_ns) + waitOf(d), steady)) + ')']
              .concat(CAUSES.map(function (c) {
                return fmtNs(byCause[c]) + ' (' + pct(share(byCause[c], steady)) + ')';
              }))
              .concat(showPeers ? [known(d.comm_wait_ns) ? fmtNs(num(d.comm_wait_ns)) : 'not known'] : [])
              .concat([d.phases && d.phases.start_up ? fmtNs(num(d.phases.start_up.ns)) : '',
                       String(num(d.step_count)), String(num(d.kernel_count))]);
        }),
        [false, false, true, true, true, true, true, true].concat(showPeers ? [true] : [])
            .concat([true, true, true]));
  if ((report.unused_devices || []).length) {
    add(root, el('div', 'note', 'Visible but unused: GPU ' + report.unused_devices.join(', GPU ')));
  }
  if ((report.ranks || []).length) {
    add(root, el('h2', '', 'Ranks'));
    var stragglers = {};
    (report.stragglers || []).forEach(function (s) { stragglers[String(s)] = true; });
    if (report.straggler_rank !== null && report.straggler_rank !== undefined) {
      add(root, el('div', 'note', 'Straggler: rank ' + report.straggler_rank +
                                      ' (the others waited for it most).'));
    }
    // A rank's own cause as a share of its own steady state (its devices'), like every share.
    var rankLost = {}, rankSteady = {};
    devices.forEach(function (d) {
      var k = String(d.rank);
      rankSteady[k] = (rankSteady[k] || 0) + steadyOf(d);
      var bySub = lostBySubcause(d);
      rankLost[k] = rankLost[k] || {};
      Object.keys(bySub).forEach(function (s) { rankLost[k][s] = (rankLost[k][s] || 0) + bySub[s]; });
    });
    table(root, ['rank', 'host', 'pid', 'straggler', 'made others wait', 'waited for peers',
                 'arrived last', 'own cause (% of its steady state)', 'clock offset'],
          report.ranks.map(function (r) {
            var k = String(r.rank);
            var own = r.own_cause ? String(r.own_cause) : '';
            return [String(r.rank), r.host || '', r.pid === null ? '' : String(r.pid),
                    stragglers[k] ? 'yes' : '', fmtNs(num(r.late_ns)),
                    fmtNs(num(r.wait_ns)), String(num(r.arrived_last)) + ' of ' + String(num(r.collectives)),
                    own ? own + ' ' + pct(share((rankLost[k] || {})[own] || 0, rankSteady[k] || 0)) : '',
                    fmtNs(num(r.clock_offset_ns))];
          }),
          [true, false, true, false, true, true, true, false, true]);
  }

  // ---- offenders, gaps ----------------------------------------------------------------------
  add(root, el('h2', '', 'Top offenders'));
  table(root, ['cause', 'what', 'call site', 'idle', 'gaps'],
        (report.offenders || []).map(function (o) {
          var sub = String(o.subcause || '');
          var kernel = causeOf(sub) === 'launch_bound' || sub === 'unattributed';
          return [causeCell(o.subcause), kernel ? kernelCell(o.what) : elided(o.what), elided(o.site),
                  fmtNs(num(o.idle_ns)),
                  String(num(o.count))];
        }),
        [false, false, false, true, true]);
  add(root, el('h2', '', 'Longest gaps'));
  table(root, ['device', 'at', 'length', 'cause', 'evidence', 'call site', 'next op'],
        (report.longest_gaps || []).slice(0, MAX_ROWS).map(function (g) {
          return [deviceName(g), fmtNs(num(g.start_ns) + offsetOf(g) - full[0]),
                  fmtNs(num(g.end_ns) - num(g.start_ns)), causeCell(g.subcause), elided(g.evidence),
                  elided(g.call_site), kernelCell(g.next_op)];
        }),
        [false, true, true, false, false, false, false], (report.longest_gaps || []).length);

  // ---- the input ----------------------------------------------------------------------------
  add(root, el('h2', '', 'Input'));
  var c = report.completeness || {};
  var facts = [
    'records: ' + String(c.status || 'unknown') +
        (c.dropped_records ? ', ' + c.dropped_records + ' dropped' : '') +
        (c.zero_timestamp_records ? ', ' + c.zero_timestamp_records + ' with zero time stamps' : '') +
        (c.record_limit_reached ? ', record limit reached (the report ends there)' : ''),
    'inputs: ' + (inputs.length ? inputs.slice(0, 20).join(', ') +
                                      (inputs.length > 20 ? ' and ' + (inputs.length - 20) + ' more' : '')
                                : 'live capture')
  ];
  // The GPUs used, counted from the devices listed (a merge of ranks lists every rank's, while
  // visible_device_count is per process); the visible ones only where they are at least as many.
  var usedCount = devices.length;
  var visibleCount = (report.visible_devices || []).length ||
                     num(report.visible_device_count) * Math.max(1, Object.keys(rankSet).length);
  facts.push('GPUs: ' + usedCount + (visibleCount >= usedCount && visibleCount > 0
                                          ? ' of ' + visibleCount + ' visible used' : ' used'));
  if (report.coverage) {
    var cov = report.coverage;
    var seen = 'sampled: ' + cov.windows + ' windows, ' + fmtNs(num(cov.traced_ns)) + ' traced of ' +
               fmtNs(num(cov.span_ns));
    if (num(cov.window_ns) > 0 && num(cov.period_ns) > 0) {
      seen += ': ' + (num(cov.first_window_ns) > num(cov.window_ns)
                          ? 'the first ' + fmtNs(num(cov.first_window_ns)) + ' whole, then ' : '') +
              fmtNs(num(cov.window_ns)) + ' of every ' + fmtNs(num(cov.period_ns));
    }
    var tail = num(cov.span_ns) - num(cov.traced_until_ns);
    if (num(cov.traced_until_ns) > 0 && tail > Math.max(1e8, num(cov.span_ns) / 100)) {
      seen += '; nothing traced after ' + fmtNs(num(cov.traced_until_ns));
    }
    facts.push(seen);
  }
  if (report.clock && report.clock.method) {
    facts.push('clocks: ' + String(report.clock.method) + ', ' + report.clock.hosts + ' host(s), residual ' +
               fmtNs(num(report.clock.residual_ns)));
  }
  var o = report.options || {};
  facts.push('thresholds: launch_gap_max ' + fmtNs(num(o.launch_gap_max_ns)) + ', dispatch_latency_max ' +
             fmtNs(num(o.dispatch_latency_max_ns)));
  var ul = add(root, el('ul'));
  facts.forEach(function (f) { add(ul, el('li', '', f)); });
  var warnings = report.warnings || [];
  if (warnings.length) {
    add(root, el('h2', '', 'Warnings'));
    var wl = add(root, el('ul'));
    warnings.slice(0, MAX_ROWS).forEach(function (w) { add(wl, el('li', '', w)); });
    if (warnings.length > MAX_ROWS) add(root, el('div', 'note', (warnings.length - MAX_ROWS) + ' more.'));
  }

  drawTimeline();
  drawSteps();
  window.addEventListener('resize', function () { redraw(); drawSteps(); });
  root.setAttribute('data-render-ms', (performance.now() - started).toFixed(1));
  root.setAttribute('data-status', 'ready');
})();
