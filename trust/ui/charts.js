// Small SVG charts, built with DOM calls only (no markup from data: receipt text never becomes HTML).
const SVG = 'http://www.w3.org/2000/svg'
const COLORS = { allow: '#2e9e57', deny: '#c9352b', other: '#e39b2d' }

function el(name, attributes, text) {
  const node = document.createElementNS(SVG, name)
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v))
  if (text !== undefined) node.textContent = text
  return node
}

function empty(container, message) {
  container.replaceChildren()
  const p = document.createElement('p')
  p.className = 'muted'
  p.textContent = message
  container.append(p)
}

/** Stacked columns per time bucket: allows, denies, and cancelled plus incomplete. */
export function drawTimeChart(container, rows, label) {
  if (rows.length === 0) return empty(container, 'No receipts in this range.')
  const width = 760
  const height = 220
  const pad = 30
  const max = Math.max(1, ...rows.map(r => r.metrics.totalReceipts))
  const step = (width - pad) / rows.length
  const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'decisions over time by verdict' })
  svg.append(el('text', { x: 0, y: 12, 'font-size': 11 }, `max ${max}`))
  rows.forEach((row, i) => {
    const m = row.metrics
    const parts = [
      ['allow', m.allowCount],
      ['deny', m.denyCount],
      ['other', m.cancelledCount + m.incompleteCount],
    ]
    let y = height - pad
    for (const [kind, count] of parts) {
      if (count === 0) continue
      const h = ((height - 2 * pad) * count) / max
      y -= h
      const rect = el('rect', { x: pad + i * step + 1, y, width: Math.max(1, step - 2), height: h, fill: COLORS[kind] })
      rect.append(el('title', {}, `${label(row)}: ${count} ${kind}`))
      svg.append(rect)
    }
  })
  svg.append(el('text', { x: pad, y: height - 8, 'font-size': 11 }, label(rows[0])))
  svg.append(el('text', { x: width - 4, y: height - 8, 'font-size': 11, 'text-anchor': 'end' }, label(rows[rows.length - 1])))
  container.replaceChildren(svg)
}

/** Horizontal bars, largest first: [{ label, count }]. */
export function drawBars(container, rows, emptyMessage) {
  if (rows.length === 0) return empty(container, emptyMessage)
  const width = 760
  const rowHeight = 22
  const labelWidth = 380
  const max = Math.max(...rows.map(r => r.count))
  const svg = el('svg', { width, height: rows.length * rowHeight + 4, role: 'img' })
  rows.forEach((row, i) => {
    const y = i * rowHeight + 2
    svg.append(el('text', { x: 0, y: y + 15, 'font-size': 12 }, row.label.length > 60 ? `${row.label.slice(0, 57)}...` : row.label))
    const w = ((width - labelWidth - 50) * row.count) / max
    svg.append(el('rect', { x: labelWidth, y: y + 3, width: Math.max(1, w), height: rowHeight - 6, fill: COLORS.deny }))
    svg.append(el('text', { x: labelWidth + w + 6, y: y + 15, 'font-size': 12 }, String(row.count)))
  })
  container.replaceChildren(svg)
}
