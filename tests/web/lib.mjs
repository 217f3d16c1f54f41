// tests/web/lib.mjs - what the browser tests (webui*.mjs) share: TAP-ish reporting, the axe-core
// audit with its screenshots, the API client, and Home Assistant's ingress in small.
import http from 'node:http';
import path from 'node:path';

// ok(cond, desc, detail) prints "ok - ..." or "not ok - ..." (and up to 12 "# " lines of
// detail); audit(page, name) runs axe-core (through the debugging protocol: the pages' CSP
// allows no injected script), WCAG 2.x A and AA, then, once per name, at phone width (360 px)
// checks that the page does not scroll sideways (naming the element that sticks out) and that no
// box cuts what it holds (a table in an overflow-x-auto region passes the first check while its
// last columns sit off the screen, behind a scroll nobody sees), that a link wrapped under the
// button beside it starts where the button does, runs axe again, and screenshots the page at
// desktop and phone width into shots; at either width, a table with nothing in it (one row of
// one cell across it, its "No … yet") shows no column headers; failures()
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
			const heads = await page.evaluate(emptyHeads);
			ok(heads.length === 0, `${name}: an empty table shows no column headers`, heads.join('\n'));
			await page.setViewportSize({ width: 360, height: 740 });
			const wide = await page.evaluate(sideways);
			ok(wide === null, `${name} does not scroll sideways at 360 px`, wide);
			const cuts = await page.evaluate(cut);
			ok(cuts.length === 0, `${name}: no box cuts off what it holds at 360 px`, cuts.join('\n'));
			const askew = await page.evaluate(wrappedLinks);
			ok(askew.length === 0, `${name}: a link wrapped under its button starts where the button does at 360 px`, askew.join('\n'));
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

// In the page: every box that clips or scrolls sideways (overflow-x not visible) and holds
// more than it shows, as "what (text): N px of content in M px". Form controls (their own
// text scrolls inside them) and visually hidden boxes (1 px, clipped for screen readers) are
// left out: what they hold is not meant to be seen whole.
function cut() {
	const out = [];
	for (const e of document.body.querySelectorAll('*')) {
		if (/^(INPUT|SELECT|TEXTAREA|OPTION)$/.test(e.tagName)) continue;
		const cs = getComputedStyle(e);
		if (cs.overflowX === 'visible' || cs.display === 'none') continue;
		if (e.clientWidth <= 2 || cs.clipPath !== 'none' || cs.clip !== 'auto') continue;
		if (e.scrollWidth <= e.clientWidth + 1) continue;
		const name = e.tagName.toLowerCase() + (e.id ? `#${e.id}` : '') +
			(e.getAttribute('aria-label') ? `[aria-label="${e.getAttribute('aria-label')}"]` : '') +
			[...e.classList].slice(0, 3).map((c) => `.${c}`).join('');
		out.push(`${name} ("${e.textContent.trim().replace(/\s+/g, ' ').slice(0, 50)}"): ${e.scrollWidth} px of content in ${e.clientWidth} px`);
	}
	return out;
}

// In the page: the tables in main whose only row is one cell across every column (the empty
// state's sentence) and whose header row is drawn, as "caption or id: headers".
function emptyHeads() {
	const out = [];
	for (const t of document.querySelectorAll('main table')) {
		const rows = [...t.querySelectorAll(':scope > tbody > tr')];
		const head = t.querySelector(':scope > thead');
		if (!head || rows.length !== 1 || rows[0].cells.length !== 1 || rows[0].cells[0].colSpan < 2) continue;
		const b = head.getBoundingClientRect();
		if (b.width > 2 && b.height > 2) {
			out.push(`${t.id || t.caption?.textContent.trim() || 'a table'}: ${head.textContent.trim().replace(/\s+/g, ' ')} above "${rows[0].textContent.trim().slice(0, 50)}"`);
		}
	}
	return out;
}

// In the page: a link that follows a button in the same row of actions (a confirmation's
// "Keep it", a form's Cancel) and has wrapped onto a line below it, whose text starts more
// than 2 px from the button's left edge: "button / link: N px".
function wrappedLinks() {
	const out = [];
	for (const a of document.querySelectorAll('main a')) {
		const b = a.previousElementSibling;
		if (!b || b.tagName !== 'BUTTON' || !a.firstChild) continue;
		const bb = b.getBoundingClientRect();
		const r = document.createRange();
		r.selectNodeContents(a);
		const ab = r.getClientRects()[0];
		if (!ab || ab.top < bb.bottom - 1) continue; // beside the button: no wrap
		if (Math.abs(ab.left - bb.left) > 2) {
			out.push(`${b.textContent.trim()} / ${a.textContent.trim()}: its text starts ${Math.round(ab.left - bb.left)} px right of the button`);
		}
	}
	return out;
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
