// tests/web/webui.mjs - the WebUI in Debian's chromium, driven by playwright-core, checked with
// axe-core; run by tests/integration/webui.sh, which starts the daemon. Prints "ok - ...",
// "not ok - ..." and "# ..." lines; exits non-zero when something could not run at all.
import { createRequire } from 'node:module';
import path from 'node:path';
import { harness, apiAt, ingressProxy as proxyAt, focused, tabWalk } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const SHOTS = process.env.WEBUI_SHOTS;
const PREFIX = '/api/hassio_ingress/Tk3n-x';
const NEWPW = 'webui-admin-pw-1';
const VIEWPW = 'webui-viewer-pw-1';
const { ok, audit, failures, audited } = harness(axeSource, SHOTS);
const api = apiAt(BASE);
const ingressProxy = (target) => proxyAt(target, PREFIX);
let TOKEN = ''; // the admin's API token, once the password is changed

// Poll test() (async, true when done) every 250 ms for up to secs seconds: whether it ended true.
async function until(secs, test) {
	for (let i = 0; i < secs * 4; i++) {
		if (await test()) return true;
		await new Promise((r) => setTimeout(r, 250));
	}
	return false;
}

// The name of the tenant's run waiting for approval, other than those in skip ('' when none
// waits within secs seconds).
async function awaitingRun(tenant, skip, secs) {
	let name = '';
	await until(secs, async () => {
		const r = await api('GET', `/api/v1/tenants/${tenant}/runs`, TOKEN);
		const w = (r.json?.items || []).find((x) => x.status?.phase === 'AwaitingApproval' && !skip.includes(x.metadata.name));
		name = w ? w.metadata.name : '';
		return name !== '';
	});
	return name;
}

// The text of the first element sel matches, '' when there is none (not waited for).
async function text(page, sel) {
	return page.evaluate((q) => document.querySelector(q)?.textContent || '', sel);
}
async function login(page, base, user, pw) {
	await page.goto(base + '/');
	await page.fill('#username', user);
	await page.fill('#password', pw);
	await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
}

// Every URL the page names (links, forms, scripts, styles, SSE) under base's path.
async function urls(page) {
	return page.evaluate(() => {
		const out = [];
		for (const el of document.querySelectorAll('[href],[src],[action],[sse-connect]')) {
			for (const a of ['href', 'src', 'action', 'sse-connect']) {
				const v = el.getAttribute(a);
				if (v !== null && !v.startsWith('#')) out.push(v);
			}
		}
		return out;
	});
}


// The dashboard's panels say what the API says: tenants by phase and machines by stage (the
// summary's counts), the running and failed runs, the recent Warning events; the admin's has
// the recent audit. (Before the first apply a tenant has no phase: the page says Pending.)
async function dashboardPanels(page, base) {
	await page.goto(base + '/');
	const sum = (await api('GET', '/api/v1/summary', TOKEN)).json || {};
	const section = (h) => text(page, `section[aria-labelledby=${h}]`);
	const counts = async (h, what, none) => {
		const got = (await section(h)).replace(/\s+/g, ' ');
		const want = Object.entries(sum[what]?.by || {}).map(([k, n]) => `${n} ${k === 'Unknown' ? none : k}`);
		return { ok: want.length > 0 && want.every((w) => got.includes(w)), why: `want ${want.join(', ')} in "${got}"` };
	};
	const tp = await counts('h-tenants', 'tenants', 'Pending');
	ok(tp.ok, 'dashboard: tenants by phase, as the API counts them', tp.why);
	const ms = await counts('h-machines', 'machines', 'Unknown');
	ok(ms.ok, 'dashboard: machines by stage, as the API counts them', ms.why);
	const runs = ((await api('GET', '/api/v1/runs', TOKEN)).json?.items || []);
	const named = (r) => `${r.metadata.tenant} / ${r.metadata.name}`;
	const running = runs.filter((r) => ['Queued', 'Running', 'AwaitingApproval'].includes(r.status?.phase));
	const rtext = await section('h-running');
	ok(running.length > 0 && running.every((r) => rtext.includes(named(r))),
		'dashboard: the running runs (one awaiting approval among them)', `${running.map(named).join(', ')} in "${rtext.trim()}"`);
	const failed = runs.filter((r) => r.status?.phase === 'Failed');
	const ftext = await section('h-failed');
	ok(failed.length ? failed.slice(0, 10).every((r) => ftext.includes(named(r))) : /No run has failed/.test(ftext),
		'dashboard: the failed runs', `${failed.map(named).join(', ')} in "${ftext.trim()}"`);
	const warns = ((await api('GET', '/api/v1/events?fieldSelector=type%3DWarning', TOKEN)).json?.items || []);
	const wtext = await section('h-warnings');
	const words = (r) => r.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/ ([A-Z])(?=[a-z])/g, (m, c) => ` ${c.toLowerCase()}`);
	ok(warns.length ? warns.some((w) => wtext.includes(words(w.reason))) : /No warnings/.test(wtext),
		'dashboard: the recent Warning events', `${warns.length} warnings; "${wtext.trim().slice(0, 200)}"`);
	const rows = await page.locator('section[aria-labelledby=h-audit] li').allTextContents();
	ok(rows.length > 0 && rows.some((r) => /admin/.test(r)), 'dashboard: the admin sees the recent audit', rows.slice(0, 3).join(' | '));
}

// The view user: no mutating control anywhere (a run awaiting approval included, whose page
// offers the admin Approve and Cancel), no audit on the dashboard, and forged posts refused.
async function viewerScan(admin, vp, base, tenant, run) {
	await admin.goto(`${base}/tenants/${tenant}/runs/${run}`);
	const adminForms = await admin.locator('main form[action$="/approve"], main form[action$="/cancel"]').count();
	ok(adminForms === 2, 'an editor finds Approve and Cancel on the page of a run awaiting approval', adminForms);
	let mutating = 0;
	const where = [];
	for (const p of ['/', '/tenants', `/tenants/${tenant}`, `/tenants/${tenant}/nodegroups`, `/tenants/${tenant}/machines`,
		`/tenants/${tenant}/runs`, `/tenants/${tenant}/runs/${run}`, `/tenants/${tenant}/nodegroups/cp/delete`]) {
		const r = await vp.goto(base + p);
		const n = await vp.locator('form[method=post]:not([action$="/logout"])').count();
		if (n > 0 || r.status() !== 200) where.push(`${p}: ${n} (${r.status()})`);
		mutating += n;
	}
	ok(mutating === 0 && where.length === 0, 'a view user finds no mutating control on any page, a waiting run\'s included', where.join(', '));
	await vp.goto(base + '/');
	ok(await vp.locator('#h-running').count() === 1 && await vp.locator('#h-audit').count() === 0,
		'a view user\'s dashboard has its panels but no audit');
	await vp.goto(base + '/tenants');
	await audit(vp, 'tenants-view');
	const csrf = await vp.getAttribute('meta[name=csrf-token]', 'content');
	const post = (body) => vp.evaluate(async (b) => (await fetch(`/tenants/${b.t}/nodegroups/cp/scale`, { method: 'POST',
		headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: b.body })).status, { t: tenant, body });
	ok(await post('count=5') === 403, 'a forged POST without a CSRF token is refused (403)');
	ok(await post('count=5&csrf=' + '0'.repeat(64)) === 403, 'and with a wrong one (403)');
	const real = await post('count=5&csrf=' + csrf);
	ok(real === 403, 'with the right token the API still refuses the view user (403)', real);
}

// On the run page: wait for the log's end to say phase (true when it did within 30 s).
async function runEnds(page, phase) {
	try {
		await page.waitForFunction((p) => (document.querySelector('#run-log-end')?.textContent || '').includes(p), phase, { timeout: 30000 });
		return true;
	} catch (e) {
		return false;
	}
}

// Approve the run waiting on the page through its form, having read what its plan deletes
// (machine, the resource address it must name), and see it apply.
async function approve(page, who, machine, shot) {
	ok(new RegExp(`delete[\\s\\S]*${machine}|${machine}[\\s\\S]*delete`).test(await text(page, 'main')),
		`${who}: the run page lists the resource the plan deletes (${machine})`, await text(page, 'main ul'));
	await audit(page, shot);
	await page.fill('#reason', 'its plan read on the run page');
	await Promise.all([page.waitForNavigation(), page.click('main form[action$="/approve"] button')]);
	ok(page.url().includes('toast=approved') && /Run approved/.test(await text(page, '[role=status]')),
		`${who}: the plan is approved through its form, and a toast says so`, page.url());
	ok(await runEnds(page, 'Succeeded'), `${who}: and the approved run applies, its end arriving live`, await text(page, '#run-log-end'));
}

async function flow(browser, base, label, tenant, vp) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
	const sfx = label ? `-${label}` : '';
	const who = label || 'direct';

	await login(page, base, 'admin', NEWPW);
	ok(new URL(page.url()).pathname === new URL(base).pathname.replace(/\/$/, '') + '/', `${who}: logged in, on the dashboard`, page.url());
	await page.goto(base + '/tenants');
	await page.fill('#t-name', tenant);
	await Promise.all([page.waitForNavigation(), page.click('#create-tenant button[type=submit]')]);
	ok(page.url().endsWith(`/tenants/${tenant}?toast=created`), `${who}: a tenant is created through the form`, page.url());
	ok(/Created\./.test(await page.textContent('[role=status]')), `${who}: a toast says so`);
	await audit(page, `tenant-overview${sfx}`);
	if (!label) {
		// at 1280 px the node groups follow the machines (no machine yet: a short grid) in their
		// column, not below the taller Now column with a blank as high as it between them
		const gap = await page.evaluate(() => Math.round(document.querySelector('#h-nodegroups').getBoundingClientRect().top -
			document.querySelector('#machine-grid').getBoundingClientRect().bottom));
		ok(gap >= 0 && gap <= 48, `the overview at 1280 px: the node groups ${gap} px under the machines' grid`);
	}

	await page.goto(`${base}/tenants/${tenant}/nodegroups`);
	await page.fill('#ng-name', 'cp');
	await page.fill('#ng-count', 'many');
	await Promise.all([page.waitForNavigation(), page.click('#add-nodegroup button[type=submit]')]);
	const err = (await page.textContent('#ng-count-error')).trim();
	ok(err.length > 0, `${who}: a 422's cause shows next to the field it names ("${err}")`);
	ok(/whole number/.test(err) && !/[Ee]xpected an integer|got a string/.test(err), `${who}: and says it in plain words, not the validator's ("${err}")`);
	await audit(page, `nodegroup-invalid${sfx}`);
	await page.fill('#ng-count', '1');
	await Promise.all([page.waitForNavigation(), page.click('#add-nodegroup button[type=submit]')]);
	ok(page.url().includes(`/tenants/${tenant}/nodegroups?toast=created`), `${who}: a node group is added through the form`, page.url());
	await audit(page, `nodegroups${sfx}`);
	if (!label) {
		// the keyboard alone reaches every control of the form-heavy tab, in document order,
		// each showing where the focus is
		const walk = await tabWalk(page);
		const diff = walk.want.findIndex((w, i) => walk.got[i] !== w);
		ok(walk.want.length > 10 && diff < 0, `node groups tab: Tab reaches all its ${walk.want.length} controls in document order`,
			diff < 0 ? '' : `at stop ${diff}: wanted ${walk.want[diff]}, got ${walk.got[diff]}\n${walk.got.join(' > ')}`);
		ok(walk.unseen === '', 'node groups tab: every focused control shows a focus ring', walk.unseen);
	}

	// the run's page: its log arrives live
	await page.goto(`${base}/tenants/${tenant}/runs`);
	await audit(page, `runs${sfx}`);
	const heads = await page.locator('thead th').allTextContents();
	const runnerCell = await page.locator('tbody tr').first().locator('td').nth(heads.indexOf('Runner')).textContent().catch(() => '');
	ok(heads.includes('Runner') && runnerCell.trim() === '-',
		`${who}: the runs tab has a Runner column, - for the daemon's own pool`, `${heads.join('|')}: ${runnerCell}`);
	const runLink = page.locator('tbody a').first();
	await Promise.all([page.waitForNavigation(), runLink.click()]);
	const runRunner = await page.textContent('#run-runner').catch(() => '');
	ok(runRunner.trim() === '-', `${who}: the run page names its runner (-: the daemon's own pool)`, runRunner);
	await page.evaluate(() => { window.__stayed = true; });
	try {
		await page.waitForFunction(() => /Succeeded|Failed/.test(document.querySelector('#run-log-end')?.textContent || ''), null, { timeout: 30000 });
	} catch (e) { /* asserted below */ }
	const log = await page.textContent('#run-log');
	ok(/Apply complete!|No changes\.|Plan:/.test(log), `${who}: the run's log streams into the page`, log.slice(0, 300));
	ok(await page.evaluate(() => window.__stayed === true), `${who}: without a reload`);
	// the outcome: a badge in its tone, on the line of "Log end:" (at 360 px too)
	for (const w of [1280, 360]) {
		await page.setViewportSize({ width: w, height: w === 360 ? 740 : 900 });
		const end = await page.evaluate(() => {
			const b = document.querySelector('#run-log-end .badge');
			const label = document.querySelector('#run-log-end').previousElementSibling;
			if (!b || !label) return { html: document.querySelector('#run-log-end')?.outerHTML };
			const bb = b.getBoundingClientRect();
			const lb = label.getBoundingClientRect();
			return { cls: b.className, text: b.textContent, line: Math.abs((bb.top + bb.bottom) / 2 - (lb.top + lb.bottom) / 2) < 4 };
		});
		ok(/badge-ok/.test(end.cls || '') && end.text === 'Succeeded' && end.line === true,
			`${who}: at ${w} px the log's end is a green Succeeded badge on the line of "Log end:"`, JSON.stringify(end));
	}
	await page.setViewportSize({ width: 1280, height: 900 });
	await audit(page, `run${sfx}`);

	// machines reach Running live
	await page.goto(`${base}/tenants/${tenant}/machines`);
	await page.evaluate(() => { window.__stayed = true; });
	let running = false;
	try {
		await page.waitForFunction(() => /Running/.test(document.querySelector('#machine-rows')?.textContent || ''), null, { timeout: 30000 });
		running = true;
	} catch (e) { /* asserted */ }
	ok(running && await page.evaluate(() => window.__stayed === true), `${who}: the machine reaches Running on the page without a reload`, await page.textContent('#machine-rows'));
	await audit(page, `machines${sfx}`);

	// scale to 2, then 2 machines Running live (not repeated under the ingress: time)
	if (!label) {
		await page.goto(`${base}/tenants/${tenant}/nodegroups`);
		await page.fill('#scale-cp', '2');
		await Promise.all([page.waitForNavigation(), page.click('#nodegroup-cp button[type=submit]')]);
		ok(page.url().includes('toast=scaled'), `${who}: the node group is scaled through its form`, page.url());
		await page.goto(`${base}/tenants/${tenant}/machines`);
		let two = false;
		try {
			await page.waitForFunction(() => (document.querySelector('#machine-rows')?.textContent.match(/Running/g) || []).length >= 2, null, { timeout: 40000 });
			two = true;
		} catch (e) { /* asserted */ }
		ok(two, `${who}: and its second machine reaches Running live`, await page.textContent('#machine-rows'));
	}
	await page.goto(`${base}/tenants/${tenant}/nodegroups/cp/delete`);
	ok(/destroys its (machine|2 machines),/.test(await page.textContent('main')) && /cp-0/.test(await page.textContent('main')),
		`${who}: deleting a node group first names the machines it destroys`);
	await audit(page, `delete-nodegroup${sfx}`);

	// scaling down destroys a machine: with tofu.destroy_approval the run waits, its page
	// lists what the plan deletes; directly it is canceled, under the ingress approved (its
	// second machine made first, not waited for on the page: time; a control plane of none
	// has no endpoint: sim's plan refuses it)
	if (label) {
		await page.goto(`${base}/tenants/${tenant}/nodegroups`);
		await page.fill('#scale-cp', '2');
		await Promise.all([page.waitForNavigation(), page.click('#nodegroup-cp button[type=submit]')]);
		const two = await until(30, async () => ((await api('GET', `/api/v1/tenants/${tenant}/machines`, TOKEN)).json?.items || []).length === 2);
		ok(page.url().includes('toast=scaled') && two, `${who}: the node group is scaled up through its form`, page.url());
	}
	await page.goto(`${base}/tenants/${tenant}/nodegroups`);
	await page.fill('#scale-cp', '1');
	await Promise.all([page.waitForNavigation(), page.click('#nodegroup-cp button[type=submit]')]);
	await Promise.all([page.waitForNavigation(), page.click('#confirm-scale button[type=submit]')]);
	const waiting = await awaitingRun(tenant, [], 20);
	ok(waiting !== '', `${who}: scaling down waits for approval of its destroying plan`);
	await page.goto(`${base}/tenants/${tenant}/runs`);
	await Promise.all([page.waitForNavigation(), page.click(`tbody a[href$="/runs/${waiting}"]`)]);
	if (label) {
		await approve(page, who, 'cp\\[1\\]', `run-approval${sfx}`);
	} else {
		await viewerScan(page, vp, base, tenant, waiting);
		await dashboardPanels(page, base);
		await page.goto(`${base}/tenants/${tenant}/runs/${waiting}`);
		await Promise.all([page.waitForNavigation(), page.click('main form[action$="/cancel"] button')]);
		ok(page.url().includes(`/runs/${waiting}?toast=canceled`) && /Run canceled/.test(await text(page, '[role=status]')),
			'direct: the waiting run is canceled through its form, and a toast says so', page.url());
		let phase = '';
		await until(10, async () => {
			phase = (await api('GET', `/api/v1/tenants/${tenant}/runs/${waiting}`, TOKEN)).json?.status?.phase;
			return phase === 'Canceled';
		});
		ok(phase === 'Canceled', 'direct: the API has the run Canceled', phase);
		await audit(page, 'run-canceled');

		// deleting the node group through its confirmation: its plan destroys both machines,
		// is approved, and they go
		await page.goto(`${base}/tenants/${tenant}/nodegroups/cp/delete`);
		await Promise.all([page.waitForNavigation(), page.click('main form[action$="/cp/delete"] button[type=submit]')]);
		ok(page.url().includes(`/tenants/${tenant}/nodegroups?toast=ngdeleted-approve`) && /Node group deleted: its run waits for someone to approve/.test(await text(page, '[role=status]')),
			'direct: the node group is deleted through its confirmation, and a toast says so', page.url());
		const gone = (await api('GET', `/api/v1/tenants/${tenant}/nodegroups/cp`, TOKEN)).code;
		ok(gone === 404, 'direct: the API has no node group cp any more (404)', gone);
		const del = await awaitingRun(tenant, [waiting], 20);
		ok(del !== '', 'direct: the deletion\'s destroying plan waits for approval');
		await page.goto(`${base}/tenants/${tenant}/runs/${del}`);
		await approve(page, who, 'cp\\[1\\]', 'run-approval');
		let left = -1;
		await until(20, async () => {
			const ms = (await api('GET', `/api/v1/tenants/${tenant}/machines`, TOKEN)).json?.items || [];
			left = ms.filter((m) => m.spec?.nodeGroup === 'cp').length;
			return left === 0;
		});
		ok(left === 0, 'direct: and the node group\'s machines go', `${left} left`);
	}
	await page.goto(base + '/');
	await audit(page, `dashboard${sfx}`);
	await page.goto(base + '/tenants');
	await audit(page, `tenants${sfx}`);
	return { ctx, page };
}

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		// first login: the one-time password must be changed
		const ctx = await browser.newContext();
		const page = await ctx.newPage();
		await page.goto(BASE + '/');
		ok(new URL(page.url()).pathname === '/login', 'a visitor is sent to the login page', page.url());
		const resp = await page.goto(BASE + '/login');
		const h = resp.headers();
		ok(/frame-ancestors 'none'/.test(h['content-security-policy'] || ''), 'pages say frame-ancestors \'none\' outside the ingress', h['content-security-policy']);
		await audit(page, 'login');
		// the keyboard alone: Tab goes from the skip link through the fields to the button,
		// every stop shows where the focus is, and Enter sends the form
		const stops = [];
		let unseen = '';
		for (let i = 0; i < 12 && !stops.includes('submit'); i++) {
			await page.keyboard.press('Tab');
			const f = await focused(page);
			stops.push(f.id);
			if (!f.ring) unseen += `${f.id} (${f.how}) `;
		}
		ok(stops[0] === 'Skip to the content' && stops.indexOf('username') < stops.indexOf('password') &&
			stops.indexOf('password') < stops.indexOf('submit') && stops.indexOf('username') >= 0,
			'Tab reaches the skip link first, then the user name, the password and the button', stops.join(' > '));
		ok(unseen === '', 'every focused control shows a focus ring', unseen);
		await page.focus('#username');
		await page.keyboard.type('admin');
		await page.keyboard.press('Tab');
		await page.keyboard.type('not-the-password');
		await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
		ok(/not correct/.test(await page.textContent('main')), 'a wrong password typed and sent with Enter is refused with a message');
		await audit(page, 'login-refused');
		await page.fill('#username', 'admin');
		await page.fill('#password', process.env.WEBUI_OTP);
		await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
		ok(new URL(page.url()).pathname === '/password', 'the one-time password leads to the password change', page.url());
		const cookies = await ctx.cookies();
		const sess = cookies.find((c) => c.name === 'rezus_session');
		ok(sess && sess.httpOnly && sess.sameSite === 'Lax' && sess.path === '/' && !sess.secure,
			'the session cookie is HttpOnly, SameSite=Lax, Path=/ (not Secure over plain HTTP)', JSON.stringify(sess));
		await page.goto(BASE + '/tenants');
		ok(new URL(page.url()).pathname === '/password', 'no other page before the password is changed', page.url());
		await audit(page, 'password');
		// two new passwords that differ, then one the API refuses (too short: the browser's
		// own check taken away), each named next to its field
		const change = async (cur, pw, again) => {
			await page.fill('#currentPassword', cur);
			await page.fill('#newPassword', pw);
			await page.fill('#confirmPassword', again);
			await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
		};
		await change(process.env.WEBUI_OTP, NEWPW, NEWPW + 'x');
		ok(/differ/.test(await text(page, '#confirmPassword-error')), 'two new passwords that differ are named at the second', await text(page, 'main'));
		const once = async (sel, href) => {
			const m = (await text(page, sel)).trim();
			const main = (await text(page, 'main')).replace(/\s+/g, ' ');
			const links = await page.evaluate(() => [...document.querySelectorAll('#form-problems a')].map((a) => a.getAttribute('href')));
			return m !== '' && main.split(m).length === 2 && links.includes(href) && await page.locator('.toast').count() === 0 &&
				!/currentPassword|newPassword|are required/.test(main) ? '' : `"${m}" / ${links.join(',')} / ${main.slice(0, 300)}`;
		};
		const d1 = await once('#confirmPassword-error', '#confirmPassword');
		ok(d1 === '', 'said once: beside the field, a summary linking to it, no banner', d1);
		await audit(page, 'password-differ');
		await page.evaluate(() => document.querySelectorAll('[minlength]').forEach((e) => e.removeAttribute('minlength')));
		await change(process.env.WEBUI_OTP, 'short', 'short');
		ok(/8 to 1024/.test(await text(page, '#newPassword-error')), 'a new password the API refuses has its reason next to it', await text(page, 'main'));
		const d2 = await once('#newPassword-error', '#newPassword');
		ok(d2 === '', 'said once, in plain words (not the API\'s field names), a summary linking to it, no banner', d2);
		await audit(page, 'password-refused');
		await change(process.env.WEBUI_OTP, NEWPW, NEWPW);
		ok(/Password changed/.test(await page.textContent('main')), 'the password is changed, and a toast says so', page.url());
		TOKEN = (await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW })).json?.token;

		// a cookie does not reach the API: bearer only
		const apiByCookie = await page.evaluate(async () => (await fetch('/api/v1/tenants')).status);
		ok(apiByCookie === 401, 'the session cookie does not authenticate /api (401)', apiByCookie);
		const forgedAdmin = await page.evaluate(async () => (await fetch('/tenants', { method: 'POST',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=forged&clusterProvider=sim' })).status);
		ok(forgedAdmin === 403, 'an admin\'s form post without the CSRF token is refused (403)', forgedAdmin);

		// before the first tenant: the dashboard says what to do; an unknown tenant is a 404
		await page.goto(BASE + '/');
		ok(/No tenants yet/.test(await text(page, 'section[aria-labelledby=h-tenants]')), 'the dashboard without tenants says to create the first one');
		await audit(page, 'dashboard-empty');
		const nf = await page.goto(BASE + '/tenants/no-such-tenant');
		ok(nf.status() === 404 && /no such tenant/.test(await text(page, 'main')), 'an unknown tenant is a 404 page saying so', nf.status());
		await audit(page, 'not-found');
		await page.goto(BASE + '/tenants');
		await page.fill('#t-name', 'Not_A_Name');
		const bad = await Promise.all([page.waitForNavigation(), page.click('#create-tenant button[type=submit]')]);
		const nameErr = await text(page, '#t-name-error');
		ok(bad[0].status() === 422 && nameErr.trim() !== '', 'a tenant the API refuses: 422, its cause next to the name', `${bad[0].status()}: ${nameErr}`);
		const links = await page.evaluate(() => [...document.querySelectorAll('#form-problems a')].map((a) => `${a.getAttribute('href')} ${a.textContent}`));
		const mainText = await text(page, 'main');
		ok(links.join('|') === '#t-name Name' && mainText.split(nameErr.trim()).length === 2 && !/details\.causes|is invalid/.test(mainText) &&
			await page.getAttribute('#t-name', 'aria-invalid') === 'true' && await page.inputValue('#t-name') === 'Not_A_Name',
			'one place for the error: beside the name, a summary linking to it, the value kept, no API jargon', `${links.join('|')} / ${mainText.slice(0, 300)}`);
		ok(/lower-case letters, digits and '-', starting and ending with a letter or digit/.test(nameErr) && !/alphanumeric/.test(nameErr),
			'the name\'s rule said plainly, not as the validator says it', nameErr);
		await audit(page, 'tenant-invalid');

		// the tenants list follows the watch: a tenant made through the API appears, and its
		// phase changes, without a reload
		await page.goto(BASE + '/tenants');
		await page.evaluate(() => { window.__stayed = true; });
		const made = await api('POST', '/api/v1/tenants', TOKEN, { apiVersion: 'rezuscloud.io/v1', kind: 'Tenant',
			metadata: { name: 'live1' }, spec: { clusterProvider: 'sim' } });
		ok(made.code === 201, 'a tenant is created through the API', JSON.stringify(made.json));
		let row = false;
		try {
			await page.waitForSelector('#tenant-live1', { timeout: 15000 });
			row = true;
		} catch (e) { /* asserted */ }
		ok(row && await page.evaluate(() => window.__stayed === true), 'its row appears on the open tenants list without a reload', await text(page, '#tenant-rows'));
		const phase0 = await text(page, '#tenant-live1 .phase');
		let moved = false;
		if (row) try {
			await page.waitForFunction((p0) => {
				const t = document.querySelector('#tenant-live1 .phase')?.textContent.trim();
				return t && t !== p0;
			}, phase0.trim(), { timeout: 30000 });
			moved = true;
		} catch (e) { /* asserted */ }
		ok(moved && await page.evaluate(() => window.__stayed === true), 'and its phase changes live',
			`${phase0.trim()} -> ${await text(page, '#tenant-live1 .phase')}`);
		await ctx.close();

		// a view user, looking at the direct flow's pages while a run waits for approval
		const mk = await api('POST', '/api/v1/users', TOKEN, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'viewer' }, spec: { role: 'view', password: VIEWPW } });
		ok(mk.code === 201, 'a view user is created through the API', JSON.stringify(mk.json));
		const vctx = await browser.newContext();
		const vp = await vctx.newPage();
		await login(vp, BASE, 'viewer', VIEWPW);
		await flow(browser, BASE, '', 'web1', vp);
		await vctx.close();

		// the same behind a Home Assistant style ingress
		const proxy = await ingressProxy(BASE);
		const IBASE = `http://127.0.0.1:${proxy.address().port}${PREFIX}`;
		const { ctx: ictx, page: ip } = await flow(browser, IBASE, 'ingress', 'web2');
		const bad2 = [];
		for (const p of ['/', '/tenants', '/tenants/web2', '/tenants/web2/nodegroups', '/tenants/web2/machines', '/tenants/web2/runs']) {
			const r = await ip.goto(IBASE + p);
			const csp = r.headers()['content-security-policy'] || '';
			if (/frame-ancestors/.test(csp) || r.headers()['x-frame-options']) bad2.push(`${p}: framing refused (${csp})`);
			for (const u of await urls(ip)) {
				if (!u.startsWith(PREFIX + '/')) bad2.push(`${p}: ${u}`);
			}
		}
		ok(bad2.length === 0, 'under the ingress every link, form, asset and SSE URL carries the prefix, and framing is allowed', bad2.slice(0, 10).join('\n'));
		const ipost = (body) => ip.evaluate(async (b) => (await fetch(b.url, { method: 'POST',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: b.body })).status,
		{ url: `${PREFIX}/tenants/web2/nodegroups/cp/scale`, body });
		const noTok = await ipost('count=3');
		const wrongTok = await ipost('count=3&csrf=' + '0'.repeat(64));
		ok(noTok === 403 && wrongTok === 403, 'ingress: a forged POST under the prefix, without or with a wrong CSRF token, is refused (403)', `${noTok} ${wrongTok}`);
		const icookie = (await ictx.cookies()).find((c) => c.name === 'rezus_session');
		ok(icookie && icookie.path === PREFIX, 'the session cookie is scoped to the ingress prefix', JSON.stringify(icookie));
		await Promise.all([ip.waitForNavigation(), ip.click('header button[type=submit]')]);
		ok(new URL(ip.url()).pathname === PREFIX + '/login', 'logging out redirects under the prefix', ip.url());
		await ictx.close();
		proxy.close();
	} finally {
		await browser.close();
	}
	console.log(`# pages checked with axe: ${audited()}`);
	return failures();
}

main().then(() => process.exit(0), (e) => {
	console.log(`not ok - the browser run stopped: ${String(e).split('\n')[0]}`);
	console.error(e);
	process.exit(1);
});
