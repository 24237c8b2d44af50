// The HTML report's script (docs/HTML_REPORT.md): reads the report's JSON embedded next to it
// and draws the page. Every string in the data came from a trace or a program and is hostile: it
// reaches the page only through textContent and canvas text, never as markup.
//
// What it drew is published on the report's root element for tests and tools:
// data-status ("ready" or "failed"), data-drawn-bins, data-drawn-gaps, data-drawn-steps,
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

  // Colours of the causes, busy time and one-off time: the one home of the page's palette
  // (canvas and swatches alike), in the families of the trace and the terminal: reds for
  // data-starved, blues for launch-bound, yellows for sync-bound, grey for no evidence.
  var CAUSES = ['data_starved', 'launch_bound', 'sync_bound', 'unattributed'];
  var COLOR = {
    busy: '#2a9d8f',
    data_starved: '#d62728',
    launch_bound: '#1f77b4',
    sync_bound: '#e6a800',
    unattributed: '#8d99ae',
    one_off: '#cfd8e3',
    untraced: '#ffffff'
  };
  var LABEL = {
    busy: 'busy',
    data_starved: 'data-starved',
    launch_bound: 'launch-bound',
    sync_bound: 'sync-bound',
    unattributed: 'unattributed',
    one_off: 'start-up, wind-down, one-off'
  };
  var MAX_ROWS = 200;  // rows of a table: a 100k-gap report must not become 100k DOM nodes

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : 0; }
  function fmtNs(ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return 'n/a';
    var a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + ' ns';
    if (a < 1e6) return (ns / 1e3).toPrecision(3) + ' \u00b5s';
    if (a < 1e9) return (ns / 1e6).toPrecision(3) + ' ms';
    if (a < 6e10) return (ns / 1e9).toPrecision(3) + ' s';
    return (ns / 6e10).toPrecision(3) + ' min';
  }
  function pct(x) { return isFinite(x) ? (100 * x).toFixed(1) + '%' : 'n/a'; }
  function share(part, whole) { return whole > 0 ? part / whole : 0; }
  function swatch(color) {
    var s = el('span', 'swatch');
    s.style.background = color;
    return s;
  }
  function causeOf(subcause) { return String(subcause || '').split('.')[0]; }
  function deviceName(d) {
    return (d.rank !== null && d.rank !== undefined ? 'rank ' + d.rank + ' ' : '') + 'GPU ' + d.device;
  }
  function keyOf(x) { return String(x.rank) + ':' + String(x.device); }
  function legend(parent, keys) {
    var l = add(parent, el('div', 'legend'));
    keys.forEach(function (k) {
      var item = add(l, el('span', 'item'));
      item.appendChild(swatch(COLOR[k]));
      item.appendChild(document.createTextNode(LABEL[k]));
    });
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
          add(add(tr, el('td')), cell);
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
    var span = el('span');
    span.appendChild(swatch(COLOR[causeOf(subcause)] || COLOR.unattributed));
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
  function showTip(tip, plot, x, y, lines) {
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    var left = Math.min(x + 14, Math.max(0, plot.clientWidth - tip.offsetWidth - 4));
    tip.style.left = left + 'px';
    tip.style.top = (y + 14) + 'px';
  }

  var report = JSON.parse(root.querySelector('script.gpuidle-data').textContent);
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

  // ---- header, summary cards ---------------------------------------------------------------
  if (root.parentNode === document.body) {  // a page of its own, not a notebook's output
    document.title = 'gpuidle report' + (report.inputs && report.inputs.length ?
                                             ': ' + String(report.inputs[0]) : '');
  }
  add(root, el('h1', '', 'Why the GPUs were idle'));
  var inputs = (report.inputs || []).map(String);
  add(root, el('div', 'meta',
               (inputs.length ? inputs.slice(0, 5).join(', ') +
                                    (inputs.length > 5 ? ' and ' + (inputs.length - 5) + ' more' : '') + ' \u2014 '
                              : '') +
                   String(report.source || '') + ', ' + String(report.generator || '') +
                   ', window ' + fmtNs(num(report.window && report.window.end_ns) -
                                       num(report.window && report.window.start_ns))));
  var steadyNs = 0, busyNs = 0, idleNs = 0, waitNs = 0, waitKnown = false;
  var idleByCause = {};
  CAUSES.forEach(function (c) { idleByCause[c] = 0; });
  devices.forEach(function (d) {
    var steady = d.phases && d.phases.steady ? num(d.phases.steady.ns) :
                                               num(d.steady_end_ns) - num(d.steady_start_ns);
    steadyNs += steady;
    busyNs += num(d.busy_ns);
    idleNs += num(d.idle_ns);
    CAUSES.forEach(function (c) { idleByCause[c] += num(d.idle_by_cause && d.idle_by_cause[c]); });
    if (d.comm_wait_ns !== null && d.comm_wait_ns !== undefined) {
      waitKnown = true;
      waitNs += num(d.comm_wait_ns);
    }
  });
  var cards = add(root, el('div', 'cards'));
  function card(label, value, detail, color) {
    var c = add(cards, el('div', 'card'));
    var l = add(c, el('div', 'label'));
    if (color) l.appendChild(swatch(color));
    l.appendChild(document.createTextNode(label));
    add(c, el('div', 'value', value));
    if (detail) add(c, el('div', 'detail', detail));
    return c;
  }
  card('busy (steady state)', pct(share(busyNs, steadyNs)),
       fmtNs(busyNs) + ' of ' + fmtNs(steadyNs) + ' over ' + devices.length + ' device(s)',
       COLOR.busy);
  card('idle', pct(share(idleNs, steadyNs)), fmtNs(idleNs));
  CAUSES.forEach(function (c) {
    card(LABEL[c], pct(share(idleByCause[c], steadyNs)), fmtNs(idleByCause[c]) + ' idle', COLOR[c]);
  });
  card('waiting for peers', waitKnown ? fmtNs(waitNs) : 'not known',
       waitKnown ? pct(share(waitNs, steadyNs)) + ' of steady time (busy, yet no work done)'
                 : 'needs the reports of all ranks merged');
  if (report.start_up) {
    var parts = (report.start_up.parts || []).slice(0, 3).map(function (p) {
      return String(p.kind) + ' ' + fmtNs(num(p.ns));
    });
    card('start-up (reported apart)', fmtNs(num(report.start_up.ns)),
         deviceName(report.start_up) + (parts.length ? ': ' + parts.join(', ') : ''),
         COLOR.one_off);
  }
  function gainText(a) {
    if (a.gain_per_step_ns !== undefined && a.gain_per_step_ns !== null) {
      var s = 'up to ' + fmtNs(num(a.gain_per_step_ns)) + '/step';
      if (a.gain_share_of_step !== undefined && a.gain_share_of_step !== null) {
        s += ' (' + pct(num(a.gain_share_of_step)) + ' of step time)';
      }
      return s;
    }
    if (num(a.gain_ns) > 0) return 'up to ' + fmtNs(num(a.gain_ns)) + ' in all';
    return '';
  }
  (report.advice || []).slice(0, 6).forEach(function (a) {
    var g = gainText(a);
    card('fix ' + String(a.subcause || ''), g || pct(num(a.share_of_lost_time)) + ' of lost time',
         g ? pct(num(a.share_of_lost_time)) + ' of lost time' : '', COLOR[causeOf(a.subcause)]);
  });

  // ---- timeline -----------------------------------------------------------------------------
  add(root, el('h2', '', 'Timeline'));
  add(root, el('div', 'note',
               'Each device\'s whole window, binned (upper band: what each stretch was spent on) ' +
                   'with the longest gaps exactly, by cause (lower band). Wheel: zoom, drag: pan.'));
  legend(root, ['busy'].concat(CAUSES).concat(['one_off']));
  var toolbar = add(root, el('div', 'toolbar'));
  var reset = add(toolbar, el('button', '', 'reset zoom'));
  reset.type = 'button';
  var viewLabel = add(toolbar, el('span', 'meta'));
  var tPlot = add(root, el('div', 'plot'));
  var tCanvas = add(tPlot, el('canvas', 'timeline'));
  tCanvas.setAttribute('role', 'img');
  tCanvas.setAttribute('aria-label', 'timeline of each device: busy and idle time by cause');
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
  var LABEL_W = 130;
  var rowH = devices.length <= 24 ? 34 : Math.max(3, Math.floor(720 / devices.length));
  var split = rowH >= 20;  // bins above, gaps below; else gaps drawn over the bins
  var drawnBins = 0, drawnGaps = 0;

  function drawTimeline() {
    var width = Math.max(300, tPlot.clientWidth || 900);
    var height = Math.max(1, devices.length) * rowH + 22;
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
    devices.forEach(function (d, row) {
      var y0 = row * rowH + 1;
      var binH = split ? rowH - 14 : rowH - 1;
      var off = offsetOf(d);
      if (rowH >= 12) {
        ctx.fillStyle = '#1d2433';
        ctx.fillText(deviceName(d).slice(0, 22), 4, y0 + rowH / 2);
      }
      var tl = d.timeline;
      if (tl && num(tl.bin_ns) > 0) {
        var bin = num(tl.bin_ns), start = num(tl.start_ns) + off;
        var cols = [['busy', tl.busy_ns || []]];
        CAUSES.forEach(function (c) { cols.push([c, (tl.idle_ns || {})[c] || []]); });
        cols.push(['one_off', tl.one_off_ns || []]);
        var n = cols[0][1].length;
        var first = Math.max(0, Math.floor((view[0] - start) / bin));
        var last = Math.min(n - 1, Math.ceil((view[1] - start) / bin));
        for (var i = first; i <= last; ++i) {
          var bx0 = Math.max(LABEL_W, x(start + i * bin));
          var bx1 = Math.min(LABEL_W + plotW, x(start + (i + 1) * bin));
          if (bx1 <= bx0) continue;
          var w = Math.max(bx1 - bx0, 0.5);
          var y = y0 + binH;
          for (var c = 0; c < cols.length; ++c) {
            var h = num(cols[c][1][i]) / bin * binH;
            if (h <= 0) continue;
            ctx.fillStyle = COLOR[cols[c][0]];
            ctx.fillRect(bx0, y - h, w, h);
            y -= h;
          }
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
        var color = COLOR[causeOf(g.subcause)] || COLOR.unattributed;
        ++drawnGaps;
        // Gaps narrower than a pixel that land on the pixel just drawn add nothing to see.
        if (gx1 - gx0 < 1 && Math.floor(gx0) === lastX && color === lastColor) continue;
        ctx.fillStyle = color;
        ctx.fillRect(gx0, gy, Math.max(gx1 - gx0, 1), gh);
        lastX = Math.floor(gx0);
        lastColor = color;
      }
    });
    // Time axis: from the start of the whole window.
    var axisY = devices.length * rowH + 4;
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
    noteView();
  }

  // Where the pointer is: the device row and the time, or null outside the plot.
  function pointAt(ev) {
    var rect = tCanvas.getBoundingClientRect();
    var px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    var plotW = rect.width - LABEL_W - 8;
    if (px < LABEL_W || px > LABEL_W + plotW) return null;
    return {
      row: Math.floor(py / rowH),
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
        out.push('busy ' + pct(num(tl.busy_ns[b]) / binNs));
        CAUSES.forEach(function (c) {
          var v = num(((tl.idle_ns || {})[c] || [])[b]);
          if (v > 0) out.push(LABEL[c] + ' ' + pct(v / binNs));
        });
        var o = num((tl.one_off_ns || [])[b]);
        if (o > 0) out.push(LABEL.one_off + ' ' + pct(o / binNs));
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
    legend(root, ['busy'].concat(CAUSES).concat(['one_off']));
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
    sCanvas.setAttribute('aria-label', 'each step\'s time: busy and idle by cause');
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
      CAUSES.forEach(function (c) { if (b.idle[c] > 0) lines.push(LABEL[c] + ' ' + fmtNs(b.idle[c])); });
      if (b.oneOff > 0) lines.push('one-off ' + fmtNs(b.oneOff));
      showTip(sTip, sPlot, px, ev.clientY - rect.top, lines);
    });
    sCanvas.addEventListener('mouseleave', function () { sTip.style.display = 'none'; });
  }
  function drawSteps() {
    if (!sCanvas) return;
    var steps = stepsByDevice[stepSelect.value] || [];
    var width = Math.max(300, sPlot.clientWidth || 900), height = 220;
    var ctx = sizeCanvas(sCanvas, width, height);
    var left = 60, plotW = width - left - 8, plotH = height - 24;
    var per = Math.max(1, Math.ceil(steps.length / Math.max(1, Math.floor(plotW / 3))));
    buckets = [];
    for (var i = 0; i < steps.length; i += per) {
      var b = {count: 0, busy: 0, oneOff: 0, total: 0, idle: {}, first: steps[i].name, last: ''};
      CAUSES.forEach(function (c) { b.idle[c] = 0; });
      for (var j = i; j < Math.min(steps.length, i + per); ++j) {
        var s = steps[j];
        b.count++;
        b.busy += num(s.busy_ns);
        b.oneOff += num(s.one_off_ns);
        b.total += num(s.end_ns) - num(s.start_ns);
        CAUSES.forEach(function (c) { b.idle[c] += num(s.idle_by_cause && s.idle_by_cause[c]); });
        b.last = s.name;
      }
      b.busy /= b.count;
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
    var barW = plotW / Math.max(1, buckets.length);
    buckets.forEach(function (b, k) {
      b.x0 = left + k * barW;
      b.x1 = b.x0 + barW;
      var y = plotH;
      var parts = [['busy', b.busy]];
      CAUSES.forEach(function (c) { parts.push([c, b.idle[c]]); });
      parts.push(['one_off', b.oneOff]);
      parts.forEach(function (p) {
        var h = p[1] / top * (plotH - 4);
        if (h <= 0) return;
        ctx.fillStyle = COLOR[p[0]];
        ctx.fillRect(b.x0, y - h, Math.max(barW - (barW > 4 ? 1 : 0), 0.5), h);
        y -= h;
      });
    });
    ctx.fillStyle = '#5a6478';
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillText(fmtNs(top), 2, 8);
    ctx.fillText('0', 2, plotH);
    ctx.fillText(steps.length + ' steps' + (per > 1 ? ', ' + per + ' per bar' : ''), left, height - 10);
    root.setAttribute('data-drawn-steps', String(buckets.length));
  }

  // ---- advice -------------------------------------------------------------------------------
  add(root, el('h2', '', 'Advice'));
  if (!(report.advice || []).length) add(root, el('div', 'note', 'No advice: little time was lost.'));
  (report.advice || []).forEach(function (a) {
    var box = add(root, el('div', 'advice'));
    box.style.borderLeftColor = COLOR[causeOf(a.subcause)] || COLOR.unattributed;
    var head = add(box, el('div'));
    head.appendChild(causeCell(a.subcause));
    head.appendChild(document.createTextNode(' \u2014 ' + pct(num(a.share_of_lost_time)) + ' of lost time'));
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
            return [String(w.activity || ''), String(w.site || ''), String(times),
                    fmtNs(times > 0 ? num(w.span_ns) / times : 0), fmtNs(num(w.idle_ns)),
                    parts.join(', '), String(w.fix || '')];
          }),
          [false, false, true, true, true, false, false]);
  }

  // ---- devices, ranks -----------------------------------------------------------------------
  add(root, el('h2', '', 'Devices'));
  table(root, ['device', 'name', 'busy', 'idle'].concat(CAUSES.map(function (c) { return LABEL[c]; }))
                  .concat(['waiting for peers', 'start-up', 'steps', 'kernels']),
        devices.map(function (d) {
          var steady = d.phases && d.phases.steady ? num(d.phases.steady.ns) : 0;
          return [deviceName(d), d.name || '', pct(share(num(d.busy_ns), steady)),
                  fmtNs(num(d.idle_ns))]
              .concat(CAUSES.map(function (c) { return fmtNs(num(d.idle_by_cause && d.idle_by_cause[c])); }))
              .concat([d.comm_wait_ns === null || d.comm_wait_ns === undefined ? '' : fmtNs(d.comm_wait_ns),
                       d.phases && d.phases.start_up ? fmtNs(num(d.phases.start_up.ns)) : '',
                       String(num(d.step_count)), String(num(d.kernel_count))]);
        }),
        [false, false, true, true, true, true, true, true, true, true, true, true]);
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
    table(root, ['rank', 'host', 'pid', 'straggler', 'made others wait', 'waited for peers',
                 'arrived last', 'own cause', 'clock offset'],
          report.ranks.map(function (r) {
            return [String(r.rank), r.host || '', r.pid === null ? '' : String(r.pid),
                    stragglers[String(r.rank)] ? 'yes' : '', fmtNs(num(r.late_ns)),
                    fmtNs(num(r.wait_ns)), String(num(r.arrived_last)) + ' of ' + String(num(r.collectives)),
                    r.own_cause ? String(r.own_cause) + ' ' + pct(num(r.own_cause_share)) : '',
                    fmtNs(num(r.clock_offset_ns))];
          }),
          [true, false, true, false, true, true, true, false, true]);
  }

  // ---- offenders, gaps ----------------------------------------------------------------------
  add(root, el('h2', '', 'Top offenders'));
  table(root, ['cause', 'what', 'call site', 'idle', 'gaps'],
        (report.offenders || []).map(function (o) {
          return [causeCell(o.subcause), o.what || '', o.site || '', fmtNs(num(o.idle_ns)),
                  String(num(o.count))];
        }),
        [false, false, false, true, true]);
  add(root, el('h2', '', 'Longest gaps'));
  table(root, ['device', 'at', 'length', 'cause', 'evidence', 'call site', 'next op'],
        (report.longest_gaps || []).slice(0, MAX_ROWS).map(function (g) {
          return [deviceName(g), fmtNs(num(g.start_ns) + offsetOf(g) - full[0]),
                  fmtNs(num(g.end_ns) - num(g.start_ns)), causeCell(g.subcause), g.evidence || '',
                  g.call_site || '', g.next_op || ''];
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
