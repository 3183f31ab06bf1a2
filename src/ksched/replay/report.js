const data = JSON.parse(document.getElementById('report-data').textContent);
const pods = new Map(data.pods.map(p => [p.uid, p]));
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function scoreTable(scores, weights) {
  const nodes = Object.keys(scores);
  const plugins = [];
  for (const n of nodes) for (const p of Object.keys(scores[n])) if (!plugins.includes(p)) plugins.push(p);
  const t = el('table'); const head = t.insertRow();
  head.appendChild(el('th', 'plugin'));
  for (const n of nodes) head.appendChild(el('th', n));
  for (const p of plugins) {
    const r = t.insertRow();
    const w = weights && weights[p] !== undefined ? ' \u00d7' + weights[p] : '';
    r.appendChild(el('td', p + w));
    for (const n of nodes) r.appendChild(el('td', String(scores[n][p] ?? '-')));
  }
  return t;
}
function show(uid) {
  const pod = pods.get(uid); const box = document.getElementById('details');
  box.replaceChildren();
  box.appendChild(el('h3', pod.pod));
  const facts = [['phase', pod.phase], ['recorded node', pod.recordedNode || '-'],
    ['ksched node', pod.node || '-'], ['created', pod.created + 's'],
    ['recorded bound', pod.recordedBound !== undefined ? pod.recordedBound + 's' : '-'],
    ['bound', pod.bound !== undefined ? pod.bound + 's' : '-']];
  if (pod.recordedBy) facts.push(['recorded by', pod.recordedBy]);
  if (pod.agreed !== undefined) facts.push(['agreed', pod.agreed ? 'yes' : 'no']);
  if (pod.message) facts.push(['why', pod.message]);
  const t = el('table');
  for (const [k, v] of facts) { const r = t.insertRow(); r.appendChild(el('th', k)); r.appendChild(el('td', String(v))); }
  box.appendChild(t);
  const d = pod.decision;
  if (d) {
    box.appendChild(el('h4', 'decision'));
    box.appendChild(el('p', (d.agreed ? 'the recorded node is among ' : 'the recorded node is not among ')
      + 'ksched\'s ' + d.choiceSize + ' best-scored feasible node(s): ' + (d.choice || []).join(', ')));
    if (d.reason) box.appendChild(el('p', d.reason, 'reason'));
    if (d.scores) box.appendChild(scoreTable(d.scores, d.weights));
  }
  const x = pod.explanation;
  if (x) {
    box.appendChild(el('h4', 'ksched\'s first attempt'));
    box.appendChild(el('p', 'selected ' + (x.selected || 'no node') + '; ' + x.feasible + ' feasible'));
    if (x.rejected) {
      const ul = el('ul');
      for (const [reason, n] of Object.entries(x.rejected)) ul.appendChild(el('li', n + ' \u00d7 ' + reason));
      box.appendChild(ul);
    }
    if (x.totals && pod.recordedNode && x.totals[pod.recordedNode] !== undefined)
      box.appendChild(el('p', 'recorded node ' + pod.recordedNode + ' totalled ' + x.totals[pod.recordedNode]));
    if (x.scores) box.appendChild(scoreTable(x.scores, x.weights));
  }
  document.querySelectorAll('#pods tr.selected').forEach(r => r.classList.remove('selected'));
  document.getElementById('row-' + uid).classList.add('selected');
}
document.querySelectorAll('#pods tbody tr').forEach(r => r.addEventListener('click', () => show(r.dataset.uid)));
