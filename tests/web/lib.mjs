// tests/web/lib.mjs - what the browser tests (webui*.mjs) share: TAP-ish reporting, the axe-core
// audit with its screenshots, the API client, and Home Assistant's ingress in small.
import http from 'node:http';
import path from 'node:path';

// ok(cond, desc, detail) prints "ok - ..." or "not ok - ..." (and up to 12 "# " lines of
// detail); audit(page, name) runs axe-core (through the debugging protocol: the pages' CSP
// allows no injected script), WCAG 2.x A and AA, then, once per name, at phone width (360 px)
// checks that the page does not scroll sideways (naming the element that sticks out) and runs
// axe again, and screenshots the page at desktop and phone width into shots; failures()
// counts the "not ok" lines, audited() the pages audited.
export function harness(axeSource, shots) {
	let failed = 0;
	const checked = new Set();
	function ok(cond, desc, detail) {
		if (cond) {
			console.log(`ok - ${desc}`);
		} else {
			failed++;
			console.log(`not ok - ${desc}`);
			if (detail !== undefined) {
				for (const l of String(detail).split('\n').slice(0, 12)) console.log(`# ${l}`);
			}
		}
	}
	async function axeRun(page) {
		const r = await page.evaluate(() =>
			// eslint-disable-next-line no-undef
			axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }));
		return r.violations.map((x) => `${x.id}: ${x.help} (${x.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
	}
	async function audit(page, name) {
		await page.evaluate(axeSource);
		const v = await axeRun(page);
		ok(v.length === 0, `axe: no WCAG A/AA violation on ${name}`, v.join('\n'));
		if (!checked.has(name)) {
			checked.add(name);
			await page.setViewportSize({ width: 360, height: 740 });
			const wide = await page.evaluate(sideways);
			ok(wide === null, `${name} does not scroll sideways at 360 px`, wide);
			const v360 = await axeRun(page);
			ok(v360.length === 0, `axe: no WCAG A/AA violation on ${name} at 360 px`, v360.join('\n'));
			await shot(page, path.join(shots, `${name}-360.png`));
			await page.setViewportSize({ width: 1280, height: 900 });
			await shot(page, path.join(shots, `${name}-1280.png`));
		}
	}
	return { ok, audit, failures: () => failed, audited: () => checked.size };
}

// A full-page screenshot. Headless Chromium on a loaded machine now and then produces no
// frame after a viewport change, and the screenshot waits out its timeout although the page
// is fine; a second try after the next animation frame takes it. A second timeout is
// thrown: a page that cannot be drawn at all is a failure.
async function shot(page, file) {
	try {
		await page.screenshot({ path: file, fullPage: true, timeout: 20000 });
	} catch (e) {
		if (e.name !== 'TimeoutError') throw e;
		console.log(`# screenshot ${path.basename(file)}: ${e.message.split('\n')[0]}; once more`);
		await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
		await page.screenshot({ path: file, fullPage: true, timeout: 30000 });
	}
}

// In the page: null when the document is no wider than the window, else how wide it is and
// the element reaching furthest right that no box clips (a table in an overflow-x-auto box
// scrolls on its own: that is fine; but the box clips an absolutely positioned descendant
// only when it is that descendant's containing block, as for a visually hidden label).
function sideways() {
	const vw = window.innerWidth;
	const sw = document.documentElement.scrollWidth;
	if (sw <= vw) return null;
	const clipped = (e) => {
		let pos = getComputedStyle(e).position;
		if (pos === 'fixed') return true; // on the viewport: it does not scroll
		for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
			const cs = getComputedStyle(p);
			if (pos !== 'absolute' || cs.position !== 'static') { // p holds e's box
				if (cs.overflowX !== 'visible') return true;
				pos = cs.position;
			}
		}
		return false;
	};
	let worst = null;
	let right = 0;
	for (const e of document.body.querySelectorAll('*')) {
		if (clipped(e)) continue;
		const b = e.getBoundingClientRect();
		const r = getComputedStyle(e).overflowX === 'visible' ? Math.max(b.right, b.left + e.scrollWidth) : b.right;
		if (r > right) { right = r; worst = e; }
	}
	const name = worst ? worst.tagName.toLowerCase() + (worst.id ? `#${worst.id}` : '') +
		[...worst.classList].slice(0, 4).map((c) => `.${c}`).join('') : '?';
	const text = worst ? worst.textContent.trim().replace(/\s+/g, ' ').slice(0, 60) : '';
	return `the page is ${sw} px wide in a ${vw} px window: ${name} ("${text}") reaches ${Math.round(right)} px`;
}

// The focused element (in the page): {id, ring, how}: its id (or "submit" for a submit
// button without one, else its text), whether a focus indicator is drawn (an outline with a
// width and a colour that is not transparent, or a ring shadow) and the styles that decided.
export function focused(page) {
	return page.evaluate(() => {
		const e = document.activeElement;
		const cs = getComputedStyle(e);
		return { id: e.id || (e.type === 'submit' ? 'submit' : e.textContent.trim().slice(0, 20)),
			stop: e.getAttribute('data-tabstop'),
			ring: (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0 &&
				!/rgba\(.*, 0\)$|transparent/.test(cs.outlineColor)) || cs.boxShadow !== 'none',
			how: `${cs.outlineStyle} ${cs.outlineWidth} ${cs.outlineColor} / ${cs.boxShadow}` };
	});
}

// Tab through the whole page from its start: {want, got, unseen}: want lists every control
// the keyboard should reach (links, buttons, fields, in document order; hidden ones and
// tabindex -1 left out), got the controls Tab reached in turn, unseen those showing no focus
// indicator (as focused() decides). The page is reloaded first so that focus starts at the top.
export async function tabWalk(page) {
	await page.reload();
	const want = await page.evaluate(() => {
		const sel = 'a[href], button, input:not([type=hidden]), select, textarea, [tabindex]';
		const out = [];
		for (const e of document.querySelectorAll(sel)) {
			if (e.disabled || e.tabIndex < 0 || e.getClientRects().length === 0 ||
				getComputedStyle(e).visibility === 'hidden') continue;
			e.setAttribute('data-tabstop', String(out.length));
			out.push(`${out.length}:${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}(${(e.textContent || e.name || '').trim().slice(0, 16)})`);
		}
		return out;
	});
	const got = [];
	let unseen = '';
	for (let i = 0; i < want.length; i++) {
		await page.keyboard.press('Tab');
		const f = await focused(page);
		got.push(f.stop === null ? `?:${f.id}` : want[Number(f.stop)]);
		if (!f.ring) unseen += `${f.id} (${f.how}) `;
	}
	return { want, got, unseen };
}

// api(method, path, token, body) against base: {code, json}.
export function apiAt(base) {
	return async function api(method, p, token, body) {
		const r = await fetch(base + p, {
			method,
			headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
			body: body ? JSON.stringify(body) : undefined,
		});
		return { code: r.status, json: await r.json().catch(() => null) };
	};
}

// Home Assistant's ingress in small: strips prefix, adds X-Ingress-Path, streams. Resolves to
// the listening server (127.0.0.1, a free port).
export function ingressProxy(target, prefix) {
	const t = new URL(target);
	const srv = http.createServer((req, res) => {
		if (!req.url.startsWith(prefix + '/') && req.url !== prefix) {
			res.writeHead(404).end('not under the ingress prefix');
			return;
		}
		const headers = { ...req.headers, 'x-ingress-path': prefix, host: t.host };
		const up = http.request({ host: t.hostname, port: t.port, method: req.method,
			path: req.url.slice(prefix.length) || '/', headers }, (ur) => {
			res.writeHead(ur.statusCode, ur.headers);
			ur.pipe(res);
		});
		up.on('error', () => res.destroy());
		req.pipe(up);
		res.on('close', () => up.destroy());
	});
	return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}
