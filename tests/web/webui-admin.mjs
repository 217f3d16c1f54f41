// tests/web/webui-admin.mjs - the WebUI's daemon-wide pages (providers, users and tokens, audit,
// backups) in Debian's chromium, driven by playwright-core, checked with axe-core; run by
// tests/integration/webui-admin.sh, which starts the daemon. Prints "ok - ...", "not ok - ..."
// and "# ..." lines; exits non-zero when something could not run at all. A new token's secret
// is written to WEBUI_SECRET_FILE (never printed) so that the script can look for it in the
// daemon's log and database. WEBUI_BACKUP_DIR is the folder of the daemon's backup files; the
// daemon lists a plugin "ghost" that cannot load (required: false).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { harness, apiAt, ingressProxy as proxyAt } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const SHOTS = process.env.WEBUI_SHOTS;
const NEWPW = 'webui-admin-pw-1';
const ALICEPW = 'alice-first-pw-1';
const ALICEPW2 = 'alice-second-pw-1';
const VIEWPW = 'webui-viewer-pw-1';
const PREFIX = '/api/hassio_ingress/Ad9-z';
const { ok, audit, failures, audited } = harness(axeSource, SHOTS);
const api = apiAt(BASE);
const ingressProxy = (target) => proxyAt(target, PREFIX);




async function login(page, user, pw) {
	await page.goto(BASE + '/login');
	await page.fill('#username', user);
	await page.fill('#password', pw);
	await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
}


// Every URL the page names (links, forms, scripts, styles, SSE).
const urls = (page) => page.evaluate(() => {
	const out = [];
	for (const el of document.querySelectorAll('[href],[src],[action],[sse-connect]')) {
		for (const a of ['href', 'src', 'action', 'sse-connect']) {
			const v = el.getAttribute(a);
			if (v !== null && !v.startsWith('#')) out.push(v);
		}
	}
	return out;
});

async function submit(page, selector) {
	const [resp] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
	return resp;
}

// Poll test() (async, true when done) every 100 ms for up to secs seconds: whether it ended true.
async function until(secs, test) {
	for (let i = 0; i < secs * 10; i++) {
		if (await test()) return true;
		await new Promise((r) => setTimeout(r, 100));
	}
	return false;
}

// The text of the first element sel matches, '' when there is none (not waited for); its
// attribute name, null when there is none.
const text = (page, sel) => page.evaluate((q) => document.querySelector(q)?.textContent || '', sel);
const attr = (page, sel, name) => page.evaluate(([q, n]) => document.querySelector(q)?.getAttribute(n) ?? null, [sel, name]);

// Screenshots at the widths, 375 and 1280 px (the harness's audit takes 360 and 1280).
async function shots(page, name) {
	for (const [w, h] of [[375, 740], [1280, 900]]) {
		await page.setViewportSize({ width: w, height: h });
		await page.screenshot({ path: path.join(SHOTS, `${name}-${w}.png`), fullPage: true, timeout: 30000 });
	}
}

// The datetime of every <time> under sel, in document order.
const times = (page, sel) => page.evaluate((q) => [...document.querySelectorAll(`${q} time[datetime]`)].map((t) => t.getAttribute('datetime')), sel);
const newestFirst = (ts) => ts.every((t, i) => i === 0 || ts[i - 1] >= t);
// One place for a form's error (issue 36): said beside the field (sel) once, the summary
// linking to it (href), no banner, none of the API's words. '' when so, else what is wrong.
async function onePlace(page, sel, href) {
	const msg = (await page.textContent(sel)).trim();
	const main = (await page.textContent('main')).replace(/\s+/g, ' ');
	const links = await page.evaluate(() => [...document.querySelectorAll('#form-problems a')].map((a) => a.getAttribute('href')));
	const toast = await page.locator('.toast').count();
	const wrong = [];
	if (!msg) wrong.push('no message beside the field');
	if (msg && main.split(msg.replace(/\s+/g, ' ')).length !== 2) wrong.push(`said ${main.split(msg.replace(/\s+/g, ' ')).length - 1} times`);
	if (!links.includes(href)) wrong.push(`summary links ${links.join(',') || 'nothing'}, not ${href}`);
	if (toast) wrong.push('a banner too');
	if (/is invalid|spec\.|metadata\.|details\.causes|currentPassword|newPassword/.test(main)) wrong.push('API words');
	return wrong.length ? `${wrong.join('; ')}: "${msg}" / ${main.slice(0, 300)}` : '';
}

// A sim tenant with a control-plane group whose only machine's apply fails (failOn 0): its
// runs fail and each failure records a Warning Event RunFailed.
async function failingTenant(token, name) {
	const t = await api('POST', '/api/v1/tenants', token, { apiVersion: 'rezuscloud.io/v1', kind: 'Tenant', metadata: { name }, spec: { clusterProvider: 'sim' } });
	const g = await api('POST', `/api/v1/tenants/${name}/nodegroups`, token, { apiVersion: 'rezuscloud.io/v1', kind: 'NodeGroup',
		metadata: { name: 'cp', tenant: name }, spec: { role: 'controlplane', count: 1, providerClass: 'sim', providerConfig: { failOn: 0 } } });
	return t.code === 201 && g.code === 201;
}

// The installation's pages: the HTML 404 for a browser (the API's Status kept for others),
// the favicon, the Runners page (empty, then a Runner made through the API appears live),
// the dashboard (counts that link to what they count, phases as badges, live counts and
// warnings newest first) and the Events page (sorted, filtered, live).
async function installationPages(page, token) {
	const nf = await page.goto(BASE + '/nope');
	ok(nf.status() === 404 && /^text\/html/.test(nf.headers()['content-type'] || '') && /Not found/.test(await text(page, 'h1')) &&
		await attr(page, '#error-home', 'href') === '/' && await page.locator('header nav').count() === 1,
		'a browser asking for /nope gets the site\'s 404 page: its layout and navigation, a message, a link home',
		`${nf.status()} ${nf.headers()['content-type']}: ${(await text(page, 'main')).trim().slice(0, 200)}`);
	await audit(page, 'not-found');
	await shots(page, 'not-found');
	const viaFetch = await page.evaluate(async () => {
		const r = await fetch('/nope', { headers: { Accept: 'application/json' } });
		return { code: r.status, type: r.headers.get('content-type'), body: await r.text() };
	});
	ok(viaFetch.code === 404 && viaFetch.type === 'application/json' && JSON.parse(viaFetch.body).kind === 'Status',
		'an API client asking for /nope still gets the JSON Status', JSON.stringify(viaFetch));
	const icon = await attr(page, 'link[rel=icon]', 'href');
	const ir = icon ? await page.request.get(BASE + icon) : null;
	ok(ir !== null && ir.status() === 200 && ir.headers()['content-type'] === 'image/svg+xml' && /<svg/.test(await ir.text()),
		'every page links a favicon (an SVG the daemon serves)', `${icon} ${ir && ir.status()} ${ir && ir.headers()['content-type']}`);

	// runners: the empty state says how to add one; a Runner made through the API appears live
	await page.goto(BASE + '/runners');
	const empty = await text(page, '#runners-empty');
	ok(/No remote runner yet/.test(empty) && /runners\.nats_url/.test(empty) && /rezuscloud runner/.test(empty),
		'with no runner, the Runners page says runs go to the daemon\'s own pool and how to add one', empty.trim());
	await audit(page, 'runners-empty');
	await shots(page, 'runners-empty');
	await page.evaluate(() => { window.notReloaded = true; });
	const mk = await api('POST', '/api/v1/runners', token, { apiVersion: 'rezuscloud.io/v1', kind: 'Runner', metadata: { name: 'eu-1' }, spec: { labels: { region: 'eu-frankfurt' } } });
	const t0 = Date.now();
	const shown = await until(2, async () => /eu-1/.test(await text(page, '#runner-rows')));
	const row = (await text(page, '#runner-eu-1')).replace(/\s+/g, ' ');
	ok(mk.code === 201 && shown && await page.evaluate(() => window.notReloaded === true),
		`a Runner created through the API appears on the open Runners page within 2 s, without reload (${Date.now() - t0} ms)`, `${mk.code} ${row}`);
	ok(/Never seen/.test(row) && await page.locator('#runner-eu-1 .badge').count() === 1 && /region=eu-frankfurt/.test(row),
		'its row: a phase badge (Never seen before its first heartbeat), its granted labels', row);
	ok(!/heartbeat never/.test(row) && !/0 of 0 slots/.test(row) && row.split(/never/i).length === 2,
		'and it says "never" once: no "last heartbeat never", no "0 of 0 slots" before it is seen', row);
	await audit(page, 'runners');
	await shots(page, 'runners');

	// the dashboard: counts link to what they count, phases are badges, all live
	ok(await failingTenant(token, 'warn-a'), 'a tenant whose runs fail is made through the API');
	await until(30, async () => ((await api('GET', '/api/v1/tenants/warn-a/events?fieldSelector=reason%3DRunFailed', token)).json?.items || []).length > 0);
	await page.goto(BASE + '/');
	ok(await attr(page, '#stat-tenants', 'href') === '/tenants' && await attr(page, '#stat-warnings', 'href') === '/events?type=Warning' &&
		await page.locator('section[aria-labelledby=h-tenants] a.count').count() > 0,
		'dashboard: the counts are links to what they count (tenants, the Warning Events)');
	const badges = await page.locator('section[aria-labelledby=h-tenants] .badge, section[aria-labelledby=h-machines] .badge').allTextContents();
	ok(badges.length > 0, 'dashboard: tenant phases and machine stages are badges', badges.join(', '));
	const wrow = (await text(page, 'section[aria-labelledby=h-warnings]')).replace(/\s+/g, ' ');
	const wtime = await page.locator('section[aria-labelledby=h-warnings] time').first().textContent().catch(() => '');
	const wtitle = await page.locator('section[aria-labelledby=h-warnings] time').first().getAttribute('title').catch(() => '');
	ok(/Run failed/.test(wrow) && !/RunFailed/.test(wrow) && /ago|in \d/.test(wtime) && /UTC/.test(wtitle || ''),
		'dashboard: a recent warning in words (Run failed), its time relative, the exact time on hover', `${wtime} / ${wtitle}: ${wrow.slice(0, 200)}`);
	const wtones = await page.evaluate(() => [...document.querySelectorAll('section[aria-labelledby=h-warnings] .badge')].map((b) => `${b.textContent}:${b.className}`));
	ok(wtones.length > 0 && wtones.every((x) => /^Run failed:.*badge-bad/.test(x) || /^Run awaiting approval:.*badge-wait/.test(x) || !/^Run (failed|awaiting)/.test(x)),
		'dashboard: a warning\'s badge has its meaning\'s tone (failed red, awaiting approval yellow as elsewhere)', wtones.join(', '));
	const arows = await page.locator('#recent-audit li').allTextContents();
	ok(arows.length > 0 && arows.every((r) => !/\/api\/v1\//.test(r)), 'dashboard: the recent audit names objects as the Audit page does, not API paths', arows.slice(0, 3).join(' | ').replace(/\s+/g, ' '));
	await audit(page, 'dashboard');
	await shots(page, 'dashboard');
	await page.evaluate(() => { window.notReloaded = true; });
	const before = Number(await text(page, '#stat-tenants .stat-n'));
	await api('POST', '/api/v1/tenants', token, { apiVersion: 'rezuscloud.io/v1', kind: 'Tenant', metadata: { name: 'live-count' }, spec: { clusterProvider: 'sim' } });
	const t1 = Date.now();
	const counted = await until(2, async () => Number(await text(page, '#stat-tenants .stat-n')) === before + 1);
	ok(counted && await page.evaluate(() => window.notReloaded === true),
		`dashboard: a tenant created through the API is counted within 2 s, without reload (${Date.now() - t1} ms, ${before} → ${await text(page, '#stat-tenants .stat-n')})`);
	ok(await failingTenant(token, 'warn-b'), 'a second tenant whose runs fail is made');
	let apiAt = 0;
	let pageAt = 0;
	await until(30, async () => {
		if (!apiAt && ((await api('GET', '/api/v1/tenants/warn-b/events?fieldSelector=reason%3DRunFailed', token)).json?.items || []).length > 0) apiAt = Date.now();
		if (!pageAt && /warn-b/.test(await text(page, 'section[aria-labelledby=h-warnings]'))) pageAt = Date.now();
		return apiAt && pageAt;
	});
	ok(apiAt > 0 && pageAt > 0 && pageAt - apiAt <= 2000 && await page.evaluate(() => window.notReloaded === true),
		`dashboard: a new Warning Event shows among the recent warnings within 2 s of the API having it, without reload (${pageAt - apiAt} ms)`);
	const wts = await times(page, 'section[aria-labelledby=h-warnings]');
	ok(wts.length >= 2 && newestFirst(wts), 'dashboard: the recent warnings are sorted newest first', wts.join(' '));

	// the Events filters' boxes at 1280 px: text boxes and dropdowns the same height on one line,
	// errors under some of them moving none
	const lined = (p) => p.evaluate(() => ['#e-tenant', '#e-type', '#e-kind', '#e-reason', '#event-filters button[type=submit]']
		.map((id) => { const b = document.querySelector(id).getBoundingClientRect(); return `${id}: top ${Math.round(b.top)} height ${Math.round(b.height)}`; }));
	const inLine = (l) => new Set(l.map((x) => x.replace(/^[^:]*: /, ''))).size === 1;
	// the Events page: newest first, Warning badges, filters as query parameters, live
	await page.goto(BASE + '/events');
	const ets = await times(page, '#event-rows');
	ok(ets.length >= 3 && newestFirst(ets), `Events: every tenant's Events, the one that last happened first (${ets.length} rows)`, ets.slice(0, 6).join(' '));
	const warnBadges = await page.locator('#event-rows .badge-bad').allTextContents();
	ok(warnBadges.length > 0 && warnBadges.every((b) => b.trim() === 'Warning'), 'Events: a Warning is a badge', warnBadges.slice(0, 3).join(','));
	await audit(page, 'events');
	await shots(page, 'events');
	const line0 = await lined(page);
	ok(inLine(line0), 'Events at 1280 px: the filters\' text boxes, dropdowns and button are one height on one line', line0.join('\n'));
	if (await page.locator('#event-filters').count() === 0) {
		ok(false, 'Events: the page has its filters');
		return;
	}
	await page.fill('#e-tenant', 'warn-a');
	await page.selectOption('#e-type', 'Warning');
	await page.selectOption('#e-kind', 'Tenant');
	await page.fill('#e-reason', 'RunFailed');
	await submit(page, '#event-filters button[type=submit]');
	const fq = new URL(page.url()).searchParams;
	const frows = await page.locator('#event-rows li.event-row').allTextContents();
	ok(fq.get('tenant') === 'warn-a' && fq.get('type') === 'Warning' && fq.get('kind') === 'Tenant' && fq.get('reason') === 'RunFailed' &&
		frows.length > 0 && frows.every((r) => /warn-a/.test(r) && /Warning/.test(r) && /Run failed/.test(r) && /Tenant/.test(r)) &&
		await page.inputValue('#e-tenant') === 'warn-a' && await page.inputValue('#e-kind') === 'Tenant',
		`Events: the filters (tenant, type, kind, reason) are query parameters, kept in the form, and the rows match (${frows.length})`, frows.slice(0, 3).join(' | '));
	ok(frows.every((r) => !/Run failed failed/.test(r.replace(/\s+/g, ' '))), 'Events: a row says its reason once', frows.slice(0, 2).join(' | '));
	await audit(page, 'events-filtered');
	const bad = await page.goto(BASE + '/events?tenant=Not_A_Name&type=Bad');
	ok(bad.status() === 422 && /tenant's name/.test(await text(page, '#e-tenant-error')) && /Normal or Warning/.test(await text(page, '#e-type-error')),
		'Events: a bad filter is a 422 with its cause beside the field', `${bad.status()}: ${await text(page, '#e-tenant-error')}`);
	const line1 = await lined(page);
	ok(inLine(line1), 'Events at 1280 px: with errors under two filters, the filters stay on one line', line1.join('\n'));
	await audit(page, 'events-invalid');
	await page.goto(BASE + '/events?tenant=live-events');
	const eempty = await text(page, '#events-empty');
	ok(await page.locator('#events-empty').count() === 1 && /No event matches these filters: widen them/.test(eempty) && !/Event matches/.test(eempty),
		'Events: with nothing matching, the empty state says to widen the filters (no stray capital)', eempty);
	ok(await page.locator('main a', { hasText: /^Show all/ }).count() === 1, 'and "Show all" is offered once, beside Filter',
		(await page.locator('main a', { hasText: /^Show all/ }).allTextContents()).join(' | '));
	await shots(page, 'events-empty');
	await page.evaluate(() => { window.notReloaded = true; });
	await api('POST', '/api/v1/tenants', token, { apiVersion: 'rezuscloud.io/v1', kind: 'Tenant', metadata: { name: 'live-events' }, spec: { clusterProvider: 'sim' } });
	apiAt = 0;
	pageAt = 0;
	await until(30, async () => {
		if (!apiAt && ((await api('GET', '/api/v1/tenants/live-events/events', token)).json?.items || []).length > 0) apiAt = Date.now();
		if (!pageAt && await page.locator('#event-rows li.event-row').count() > 0) pageAt = Date.now();
		return apiAt && pageAt;
	});
	const lrows = await page.locator('#event-rows li.event-row').allTextContents();
	ok(apiAt > 0 && pageAt > 0 && pageAt - apiAt <= 2000 && await page.evaluate(() => window.notReloaded === true),
		`Events: a new Event shows on the open, filtered page within 2 s of the API having it, without reload (${pageAt - apiAt} ms)`);
	ok(lrows.length > 0 && lrows.every((r) => /live-events/.test(r)), 'Events: the live rows keep the page\'s filter (the tenant live-events only)',
		lrows.slice(0, 3).join(' | ').replace(/\s+/g, ' '));
}

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		const ctx = await browser.newContext({ acceptDownloads: true });
		const page = await ctx.newPage();
		page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });

		// the first login changes the one-time password
		await login(page, 'admin', process.env.WEBUI_OTP);
		await page.fill('#currentPassword', process.env.WEBUI_OTP);
		await page.fill('#newPassword', NEWPW);
		await page.fill('#confirmPassword', NEWPW);
		await submit(page, 'main button[type=submit]');
		ok(/Password changed/.test(await page.textContent('main')), 'the admin logs in and changes the one-time password');
		const adm0 = (await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW })).json.token;
		const nav = await page.textContent('header nav');
		ok(/Providers/.test(nav) && /Users/.test(nav) && /Audit/.test(nav) && /Backups/.test(nav),
			'an admin\'s main navigation links providers, users, audit and backups', nav);
		ok(/Events/.test(nav) && /Runners/.test(nav), 'the main navigation links Events and Runners', nav);
		await installationPages(page, adm0);

		// providers: the loaded plugins from the API's read
		await page.click('header nav a[href="/providers"]');
		await page.waitForURL(/\/providers$/);
		const prov = await page.textContent('#providers');
		ok(/sim/.test(prov) && /Loaded/.test(prov) && /1\.\d+/.test(prov) && /infra, cluster/.test(prov),
			'the providers page lists sim: loaded, its version, ABI and kinds', prov.replace(/\s+/g, ' '));
		const ghostRow = (await page.locator('#providers tbody tr', { hasText: 'ghost' }).allTextContents()).join('').replace(/\s+/g, ' ');
		const ghostApi = (await api('GET', '/api/v1/providers/ghost', adm0)).json?.status || {};
		ok(ghostApi.loaded === false && /^cannot load: /.test(ghostApi.error || '') && /Not loaded:/.test(ghostRow) &&
			ghostRow.includes(ghostApi.error.replace(/\s+/g, ' ')) && !/Loaded/.test(ghostRow.replace('Not loaded', '')),
			'a plugin that failed to load is listed as Not loaded with the API\'s error', `${ghostRow} | API: ${JSON.stringify(ghostApi)}`);
		await audit(page, 'providers');

		// users: a 422 cause next to its field, then a user created through the form
		await page.goto(BASE + '/users');
		await audit(page, 'users');
		// the users list is live: one made through the API shows without a reload
		await page.evaluate(() => { window.__stayed = true; });
		const tu = Date.now();
		await api('POST', '/api/v1/users', adm0, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'livebob' }, spec: { role: 'view', password: 'livebob-pw-123456' } });
		const useen = await page.waitForSelector('#user-livebob', { timeout: 2000 }).then(() => true, () => false);
		ok(useen && await page.evaluate(() => window.__stayed === true), `a user made through the API appears in the users list within 2 s, no reload (${Date.now() - tu} ms)`);
		await api('DELETE', '/api/v1/users/livebob', adm0);
		const ugone = await page.waitForSelector('#user-livebob', { state: 'detached', timeout: 2000 }).then(() => true, () => false);
		ok(ugone, 'and leaves it when deleted');
		await page.fill('#u-name', 'alice');
		await page.selectOption('#u-role', 'edit');
		await page.fill('#u-password', 'short');
		const uresp = await submit(page, '#create-user button[type=submit]');
		ok(uresp && uresp.status() === 422, 'the refused user form is answered 422', uresp && uresp.status());
		const perr = (await page.textContent('#u-password-error')).trim();
		ok(perr.length > 0, `a too short password is refused next to its field ("${perr}")`);
		ok(await page.inputValue('#u-password') === '', 'and the password is not sent back into the page');
		const uone = await onePlace(page, '#u-password-error', '#u-password');
		ok(uone === '', 'one place for it: beside the password, a summary linking to it, no banner, no API words', uone);
		await audit(page, 'users-invalid');
		await page.fill('#u-password', ALICEPW);
		await submit(page, '#create-user button[type=submit]');
		ok(page.url().endsWith('/users/alice?toast=created'), 'a user is created through the form', page.url());
		await audit(page, 'user');
		const nresp = await page.goto(`${BASE}/users/nobody`);
		ok(nresp.status() === 404 && /There is no such user/.test(await page.textContent('main')), 'an unknown user\'s page is a 404 that says so',
			`${nresp.status()}: ${(await page.textContent('main')).trim().slice(0, 200)}`);
		ok(await page.getAttribute('#error-back', 'href') === '/users' && /All users/.test(await page.textContent('#error-back')),
			'and its second way on is the users, not the tenants', await page.textContent('#error-back').catch(() => 'none'));
		await audit(page, 'user-not-found');
		await page.goto(`${BASE}/users/alice`);
		ok(/no API token/.test(await page.textContent('main')), 'a user without tokens says how to make one');
		// the tokens are live: one made and revoked through the API comes and goes, no reload
		await page.evaluate(() => { window.__stayed = true; });
		const tt = Date.now();
		const lt = (await api('POST', '/api/v1/users/alice/tokens', adm0, { spec: { role: 'view', description: 'live one' } })).json?.metadata?.name || 'none';
		const tseen = await page.waitForFunction((id) => (document.querySelector('#tokens-live')?.textContent || '').includes(id), lt, { timeout: 2000 }).then(() => true, () => false);
		ok(tseen && await page.evaluate(() => window.__stayed === true), `a token made through the API appears on its user's page within 2 s, no reload (${Date.now() - tt} ms)`);
		await api('DELETE', `/api/v1/users/alice/tokens/${lt}`, adm0);
		const tgone = await page.waitForFunction(() => /no API token/.test(document.querySelector('#tokens-live')?.textContent || ''), null, { timeout: 2000 }).then(() => true, () => false);
		ok(tgone, 'and leaves it when revoked');

		// a token: its secret shown once, after the redirect, never in the URL
		await page.fill('#t-description', 'ci robot');
		await page.selectOption('#t-role', 'view');
		const tresp = await submit(page, '#create-token button[type=submit]');
		const secret = await page.inputValue('#token-secret').catch(() => '');
		ok(/^rzt_[A-Za-z0-9_-]{43}$/.test(secret), 'creating a token shows its secret');
		fs.writeFileSync(process.env.WEBUI_SECRET_FILE, secret);
		ok(!page.url().includes(secret.slice(4)) && /\/users\/alice\/tokens\/tok-[0-9a-f]+$/.test(page.url()),
			'the secret is not in the page\'s URL', page.url());
		ok(tresp && tresp.headers()['cache-control'] === 'no-store', 'the page with the secret is sent Cache-Control: no-store',
			tresp && tresp.headers()['cache-control']);
		await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
		await page.focus('#token-secret');
		await page.keyboard.press('Tab');
		const onCopy = await page.evaluate(() => document.activeElement.id);
		await page.keyboard.press('Enter');
		const copied = await until(2, async () => (await text(page, '#copy-secret')).trim() === 'Copied');
		const clip = await page.evaluate(() => navigator.clipboard.readText()).catch((e) => `(${e.message})`);
		ok(onCopy === 'copy-secret' && copied && clip === secret && /Copied/.test(await text(page, '[data-copy-status]')),
			'the secret has a Copy button the keyboard reaches (Tab, Enter): it copies the secret and says Copied',
			`focus ${onCopy}, button "${(await text(page, '#copy-secret')).trim()}", clipboard ${clip === secret ? 'the secret' : clip.slice(0, 40)}`);
		await shots(page, 'token-secret');
		await audit(page, 'token-secret');
		const who = await api('GET', '/api/v1/auth/whoami', secret);
		ok(who.code === 200 && who.json.user === 'alice' && who.json.role === 'view', 'the secret works as a bearer token of alice with role view', JSON.stringify(who.json));
		const tokenUrl = page.url();
		await page.reload();
		ok(!(await page.content()).includes(secret) && await page.locator('#no-secret').count() === 1,
			'on reload the secret is gone and the page says it was shown once');
		await audit(page, 'token');
		const tokId = tokenUrl.split('/').pop();
		const day = 86400000;
		const tokObj = await api('GET', `/api/v1/users/alice/tokens/${tokId}`, adm0);
		const exp0 = Date.parse(tokObj.json?.spec?.expiresAt || '');
		ok(Math.abs(exp0 - Date.now() - 90 * day) < 120000, 'a token made with the default lifetime expires in 90 days (RFC 3339 to the API)', tokObj.json?.spec?.expiresAt);

		// a token's expiry: a lifetime or a date; bad values refused beside the field
		await page.goto(`${BASE}/users/alice`);
		ok((await page.locator('#t-expires-in option').allTextContents()).join(',') === '1 hour,1 day,7 days,30 days,90 days,never' &&
			await page.getAttribute('#t-expires-on', 'type') === 'date', 'the token form offers 1 hour to 90 days or never, or a date');
		await page.fill('#t-description', 'past');
		await page.fill('#t-expires-on', '2020-01-01');
		const presp = await submit(page, '#create-token button[type=submit]');
		ok(presp && presp.status() === 422, 'the refused token form is answered 422', presp && presp.status());
		ok(/not in the future/.test(await page.textContent('#t-expires-error')) && await page.inputValue('#t-expires-on') === '2020-01-01',
			'a date in the past is refused beside the field, the form kept', await page.textContent('#t-expires-error'));
		const eone = await onePlace(page, '#t-expires-error', '#t-expires-on');
		ok(eone === '', 'one place for it: beside the expiry, a summary linking to the date, said once', eone);
		await audit(page, 'token-expiry-invalid');
		const tcsrf = await page.getAttribute('meta[name=csrf-token]', 'content');
		const badDate = await page.evaluate(async (c) => {
			const r = await fetch('/users/alice/tokens', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
				body: `csrf=${c}&description=bad&expiresOn=2031-02-30` });
			return { code: r.status, html: await r.text() };
		}, tcsrf);
		const badErr = (badDate.html.match(/id="t-expires-error"[^>]*>([^<]*)</) || [])[1] || '';
		ok(badDate.code === 422 && /RFC 3339/.test(badErr), `a date that does not exist (2031-02-30) gets the API's cause beside the field (${badDate.code}: "${badErr}")`);
		await page.fill('#t-expires-on', '');
		await page.fill('#t-description', 'one day');
		await page.selectOption('#t-expires-in', '1d');
		await submit(page, '#create-token button[type=submit]');
		const t1 = await api('GET', `/api/v1/users/alice/tokens/${page.url().split('/').pop()}`, adm0);
		ok(Math.abs(Date.parse(t1.json?.spec?.expiresAt || '') - Date.now() - day) < 120000, 'a 1-day token expires a day from now', t1.json?.spec?.expiresAt);
		await page.goto(`${BASE}/users/alice`);
		await page.fill('#t-description', 'dated');
		await page.fill('#t-expires-on', '2031-06-01');
		await submit(page, '#create-token button[type=submit]');
		const t2 = await api('GET', `/api/v1/users/alice/tokens/${page.url().split('/').pop()}`, adm0);
		ok(/^2031-06-01T00:00:00(\.0+)?Z$/.test(t2.json?.spec?.expiresAt || ''), 'a dated token expires at that date\'s 00:00 UTC', t2.json?.spec?.expiresAt);
		await page.goto(`${BASE}/users/alice`);
		await page.selectOption('#t-expires-in', 'never');
		await page.fill('#t-description', 'forever');
		await submit(page, '#create-token button[type=submit]');
		const forever = await page.inputValue('#token-secret').catch(() => '');
		const t3 = await api('GET', `/api/v1/users/alice/tokens/${page.url().split('/').pop()}`, adm0);
		ok(t3.code === 200 && !t3.json.spec.expiresAt, 'a token made to last has no expiry', JSON.stringify(t3.json?.spec));

		// log in as alice (a user the admin made must change the initial password first)
		const actx = await browser.newContext();
		const ap = await actx.newPage();
		await login(ap, 'alice', ALICEPW);
		let alicePw = ALICEPW;
		if (new URL(ap.url()).pathname === '/password') {
			alicePw = ALICEPW2;
			await ap.fill('#currentPassword', ALICEPW);
			await ap.fill('#newPassword', ALICEPW2);
			await ap.fill('#confirmPassword', ALICEPW2);
			await submit(ap, 'main button[type=submit]');
		}
		ok(new URL(ap.url()).pathname === '/' && /alice \(edit\)/.test(await ap.textContent('header')), 'alice logs in to the dashboard', ap.url());
		const anav = await ap.textContent('header nav');
		ok(/Providers/.test(anav) && !/Users|Audit|Backups/.test(anav), 'an edit user\'s navigation has providers but no admin pages', anav);
		const own = await ap.goto(`${BASE}/users/alice`);
		ok(own.status() === 200 && new URL(ap.url()).pathname === '/account' && await ap.locator('#create-token').count() === 1 &&
			await ap.locator('#change-password').count() === 1,
			'alice asking for /users/alice (her own) lands on My account, with her tokens and the password form', `${own.status()} ${ap.url()}`);
		await ap.fill('#t-description', 'alice laptop');
		await submit(ap, '#create-token button[type=submit]');
		const asecret = await ap.inputValue('#token-secret').catch(() => '');
		await actx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
		await ap.click('#copy-secret');
		await until(2, async () => (await text(ap, '#copy-secret')).trim() === 'Copied');
		const aclip = await ap.evaluate(() => navigator.clipboard.readText()).catch(() => '');
		const arows = await ap.locator('#tokens tbody tr').allTextContents();
		ok(/^rzt_/.test(asecret) && aclip === asecret && arows.some((r) => /alice laptop/.test(r) && /Active/.test(r) && /ago|in \d/.test(r)),
			'alice makes her own token there: its secret with a Copy button, the token listed with a badge and relative times', arows.join(' | ').replace(/\s+/g, ' '));
		await audit(ap, 'account-new-token');
		await shots(ap, 'account');
		const atok = (await ap.locator('#tokens tbody tr', { hasText: 'alice laptop' }).locator('button[id^=revoke-]').getAttribute('id')).slice('revoke-'.length);
		await submit(ap, `#revoke-${atok}`);
		ok(/Token revoked/.test(await text(ap, '[role=status]')) && (await api('GET', '/api/v1/auth/whoami', asecret)).code === 401,
			'and revokes it there (its secret refused at once)');
		// her tokens are live: one she makes elsewhere (the API, as rezusctl does) shows up
		await ap.evaluate(() => { window.__stayed = true; });
		const atokens = (await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: alicePw })).json?.token;
		const ta2 = Date.now();
		const elsewhere = (await api('POST', '/api/v1/users/alice/tokens', atokens, { spec: { role: 'view', description: 'made elsewhere' } })).json?.metadata?.name || 'none';
		const aseen2 = await ap.waitForFunction((id) => (document.querySelector('#tokens-live')?.textContent || '').includes(id), elsewhere, { timeout: 2000 }).then(() => true, () => false);
		ok(aseen2 && await ap.evaluate(() => window.__stayed === true), `a token she makes through the API appears on My account within 2 s, no reload (${Date.now() - ta2} ms)`);
		await api('DELETE', `/api/v1/users/alice/tokens/${elsewhere}`, atokens);
		await ap.fill('#currentPassword', alicePw);
		await ap.fill('#newPassword', alicePw + '-3');
		await ap.fill('#confirmPassword', alicePw + '-3');
		await submit(ap, '#change-password button[type=submit]');
		const pwok = (await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: alicePw + '-3' })).code;
		ok(/Password changed/.test(await text(ap, '[role=status]')) && pwok === 200, 'and changes her own password there', pwok);
		alicePw += '-3';
		await actx.close();

		// the audit log, filtered by that user through the form: its login
		await page.goto(BASE + '/audit');
		await audit(page, 'audit');
		await page.fill('#f-user', 'alice');
		await page.fill('#f-verb', 'login');
		await page.selectOption('#f-outcome', 'success');
		await submit(page, '#audit-filters button[type=submit]');
		const q = new URL(page.url()).searchParams;
		ok(q.get('user') === 'alice' && q.get('verb') === 'login' && q.get('outcome') === 'success', 'the filters are GET query parameters', page.url());
		const rows = await page.locator('#audit-rows tbody tr').allTextContents();
		ok(rows.length >= 1 && rows.every((r) => /alice/.test(r) && /login/.test(r) && /200/.test(r)),
			`audit filtered by alice shows her login, and only hers (${rows.length} rows)`, rows.join('\n'));
		await audit(page, 'audit-filtered');
		await page.goto(BASE + '/audit?user=alice&outcome=failure');
		ok(await page.locator('#audit-empty').count() === 1 && /No audit row matches/.test(await page.textContent('main')),
			'no failed call of alice: the empty state says to widen the filters');
		await audit(page, 'audit-empty');
		await page.goto(BASE + '/audit?since=yesterday');
		ok(/not valid/.test(await page.textContent('#f-error')), 'a malformed time is named next to the filters');
		// paging: the API's limit/continue
		await page.goto(BASE + '/audit?limit=2');
		const p1 = await page.locator('#audit-rows tbody tr').allTextContents();
		await page.click('a[rel=next]');
		await page.waitForURL(/continue=/);
		const p2 = await page.locator('#audit-rows tbody tr').allTextContents();
		ok(p1.length === 2 && p2.length === 2 && p1.join() !== p2.join(), 'the audit log pages with the API\'s limit and continue (older rows on the next page)');
		ok(await page.locator('#audit-live[sse-connect]').count() === 0, 'an older page of the audit log stays as it is (no live stream)');
		// the newest rows are live: what is done through the API is listed without a reload
		await page.goto(BASE + '/audit?user=admin');
		await page.evaluate(() => { window.__stayed = true; });
		const ta = Date.now();
		await api('POST', '/api/v1/users', adm0, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'liveaudit' }, spec: { role: 'view', password: 'liveaudit-pw-123456' } });
		const aseen = await page.waitForFunction(() => /liveaudit/.test(document.querySelector('#audit-rows tbody tr')?.textContent || ''), null, { timeout: 2000 }).then(() => true, () => false);
		ok(aseen && await page.evaluate(() => window.__stayed === true), `the audit log's newest rows follow live: a user's creation through the API on top within 2 s, no reload (${Date.now() - ta} ms)`,
			(await page.locator('#audit-rows tbody tr').first().textContent().catch(() => '')).replace(/\s+/g, ' '));
		await api('DELETE', '/api/v1/users/liveaudit', adm0);

		// backups: empty state, one created through the form, its manifest downloaded
		await page.goto(BASE + '/backups');
		ok(await page.locator('#backups-empty').count() === 1, 'with no backup, the page says how to make one');
		await audit(page, 'backups-empty');
		await page.fill('#b-name', 'web-backup');
		await submit(page, '#create-backup button[type=submit]');
		ok(page.url().endsWith('/backups?toast=backup'), 'a backup is asked for through the form', page.url());
		await page.evaluate(() => { window.__stayed = true; });
		const done = await page.waitForFunction(() => /web-backup[\s\S]*Completed/.test(document.querySelector('#backups-live')?.textContent || ''), null, { timeout: 15000 }).then(() => true, () => false);
		ok(done && await page.evaluate(() => window.__stayed === true), 'the backup is listed, and its phase follows live to Completed (no reload)');
		const cbadge = await page.evaluate(() => [...document.querySelectorAll('#backups-live .badge')].filter((b) => /Completed/.test(b.textContent)).map((b) => b.className));
		ok(cbadge.length > 0 && cbadge.every((c) => /badge-ok/.test(c)), 'a finished backup\'s Completed badge is green, as finished states are elsewhere', cbadge.join(', '));
		await audit(page, 'backups');
		// its two links apart, each name whole on its line (at 1280 and 360 px)
		for (const w of [1280, 360]) {
			await page.setViewportSize({ width: w, height: w === 360 ? 740 : 900 });
			const apart = await page.evaluate(() => {
				const [m, d] = document.querySelectorAll('#backups a[href$="/manifest"], #backups a[href$="/delete"]');
				if (!m || !d) return 'no links';
				const mb = m.getClientRects(), db = d.getClientRects();
				const names = [...document.querySelectorAll('#backups a span')].filter((s) => s.getClientRects().length !== 1).map((s) => s.textContent);
				const gap = db[0].top >= mb[mb.length - 1].bottom - 1 ? 'wrapped' : Math.round(db[0].left - mb[mb.length - 1].right);
				return (gap === 'wrapped' || gap >= 8) && names.length === 0 ? '' : `${m.textContent} | ${d.textContent}: ${gap} px apart; split names: ${names.join(', ')}`;
			});
			ok(apart === '', `backups at ${w} px: "Manifest of …" and "Delete …" stand apart, the name whole`, apart);
		}
		await page.setViewportSize({ width: 1280, height: 900 });
		const [dl] = await Promise.all([page.waitForEvent('download'), page.click('a[href="/backups/web-backup/manifest"]')]);
		const file = await dl.path();
		let man = null;
		try { man = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { /* asserted */ }
		ok(dl.suggestedFilename() === 'web-backup.manifest.json' && man && man.kind === 'Backup' && man.metadata.name === 'web-backup' &&
			man.status.phase === 'Completed' && man.status.users >= 2,
			'its manifest downloads as a file: the Backup, Completed, counting the users', dl.suggestedFilename());
		ok(!fs.readFileSync(file, 'utf8').includes(secret), 'the manifest holds no token secret');

		// confirmations name what is destroyed
		await page.goto(BASE + '/backups/web-backup/delete');
		ok(/Delete the backup web-backup\?/.test(await page.textContent('main')) && /web-backup\.rzbackup|web-backup\./.test(await page.textContent('main')),
			'deleting a backup first names it and its file', await page.textContent('main'));
		await audit(page, 'delete-backup');
		await page.goto(`${BASE}/users/alice/delete`);
		ok(/Delete the user alice\?/.test(await page.textContent('main')) && /4 API tokens stop/.test(await page.textContent('main')),
			'deleting a user first names it and its tokens', await page.textContent('main'));
		await audit(page, 'delete-user');
		await page.goto(`${BASE}/users/alice/tokens/${tokId}/revoke`);
		ok(/Revoke the API token tok-[0-9a-f]+ of alice\?/.test(await page.textContent('main')) && /ci robot/.test(await page.textContent('main')),
			'revoking a token first names it', await page.textContent('main'));
		await audit(page, 'revoke-token');
		await submit(page, '#confirm button[type=submit]');
		ok(page.url().endsWith('/users/alice?toast=revoked') && /Token revoked/.test(await page.textContent('[role=status]')), 'the token is revoked through the confirmation', page.url());
		const gone = await api('GET', '/api/v1/auth/whoami', secret);
		ok(gone.code === 401, 'and its secret is refused at once (401)', gone.code);
		// a role change, refused for the last admin with the cause beside the form
		await page.goto(`${BASE}/users/admin`);
		await page.selectOption('#u-role', 'view');
		await submit(page, '#change-role button[type=submit]');
		ok(/last admin/.test(await page.textContent('#u-role-error')), 'demoting the last admin is refused beside the role form');
		await page.goto(`${BASE}/users/alice`);
		await page.selectOption('#u-role', 'view');
		await submit(page, '#change-role button[type=submit]');
		ok(page.url().endsWith('/users/alice?toast=role') && /Role view/.test(await page.textContent('main')), 'alice\'s role is changed to view', page.url());
		// disabling: refused for the last admin beside the control; alice disabled, then enabled
		await page.goto(`${BASE}/users/admin`);
		await submit(page, '#toggle-disabled button[type=submit]');
		const lastErr = await page.textContent('#u-disabled-error');
		ok(/last admin cannot be disabled/.test(lastErr), 'disabling the last admin shows the API\'s refusal beside the control', lastErr);
		const dOne = await onePlace(page, '#u-disabled-error', '#u-disable');
		ok(dOne === '' && !/User "admin"/.test(await page.textContent('main')), 'one place for it: beside the control, a summary linking to it, no banner, no API words', dOne);
		await audit(page, 'user-disable-refused');
		const admOk = await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW });
		ok(admOk.code === 200, 'and the admin can still log in');
		const before = await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: alicePw });
		const tokBefore = await api('GET', '/api/v1/auth/whoami', forever);
		ok(before.code === 200 && tokBefore.code === 200, `alice can log in and use her token before she is disabled (${before.code}, ${tokBefore.code})`);
		await page.goto(`${BASE}/users/alice`);
		await submit(page, '#toggle-disabled button[type=submit]');
		ok(page.url().endsWith('/users/alice?toast=disabled') && /User disabled/.test(await page.textContent('[role=status]')) && /alice is disabled/.test(await page.textContent('#u-state')),
			'alice is disabled through the control (toast, state)', page.url());
		const dtoks = await page.locator('#tokens tbody tr').allTextContents();
		ok(dtoks.length > 0 && dtoks.every((r) => /Refused/.test(r) && !/Active/.test(r)), 'a disabled user\'s tokens are shown Refused, not Active', dtoks.join(' | ').replace(/\s+/g, ' '));
		await audit(page, 'user-disabled');
		const refused = await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: alicePw });
		const tokRefused = await api('GET', '/api/v1/auth/whoami', forever);
		ok(refused.code === 401 && tokRefused.code === 401, `a disabled user can neither log in nor use a token (${refused.code}, ${tokRefused.code})`);
		await page.goto(`${BASE}/users`);
		const accessOf = async (u) => (await page.locator('#users tbody tr', { hasText: u }).locator('td.user-access').textContent()).trim();
		ok(await accessOf('alice') === 'Disabled' && await accessOf('admin') === 'Enabled', 'the users list shows alice Disabled, admin Enabled (capitalised as the other badges)');
		await audit(page, 'users-with-disabled');
		await page.goto(`${BASE}/users/alice`);
		await submit(page, '#toggle-disabled button[type=submit]');
		ok(page.url().endsWith('/users/alice?toast=enabled') && /alice is enabled/.test(await page.textContent('#u-state')), 'and enabled again', page.url());
		const back = await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: alicePw });
		ok(back.code === 200, 'then alice logs in again', back.code);
		await page.goto(`${BASE}/users/alice/delete`);
		await submit(page, '#confirm button[type=submit]');
		ok(page.url().endsWith('/users?toast=deleted') && !/alice/.test(await page.textContent('#users')), 'alice is deleted through the confirmation', page.url());

		// a view user: no admin controls, the admin pages refused, forged posts refused
		const adm = await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW });
		const mk = await api('POST', '/api/v1/users', adm.json.token, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'viewer' }, spec: { role: 'view', password: VIEWPW } });
		ok(mk.code === 201, 'a view user is created through the API', JSON.stringify(mk.json));
		const vctx = await browser.newContext();
		const vp = await vctx.newPage();
		await login(vp, 'viewer', VIEWPW);
		if (new URL(vp.url()).pathname === '/password') {
			await vp.fill('#currentPassword', VIEWPW);
			await vp.fill('#newPassword', VIEWPW + 'x');
			await vp.fill('#confirmPassword', VIEWPW + 'x');
			await submit(vp, 'main button[type=submit]');
		}
		const vnav = await vp.textContent('header nav');
		ok(/Providers/.test(vnav) && !/Users|Audit|Backups/.test(vnav), 'a view user\'s navigation has no admin pages', vnav);
		let mutating = 0;
		const where = [];
		const codes = [];
		for (const p of ['/providers', '/users', '/users/admin', '/users/admin/delete', '/audit', '/backups', '/backups/web-backup/delete']) {
			const r = await vp.goto(BASE + p);
			codes.push(`${p}: ${r.status()}`);
			const n = await vp.locator('form[method=post]:not([action$="/logout"])').count();
			if (n > 0) where.push(`${p}: ${n}`);
			mutating += n;
		}
		ok(mutating === 0, 'a view user finds no mutating control on the daemon-wide pages', where.join(', '));
		ok(codes.slice(1).every((c) => / 403$/.test(c)) && / 200$/.test(codes[0]),
			'the admin pages answer a view user 403 (the API\'s refusal), providers 200', codes.join(', '));
		await vp.goto(BASE + '/users');
		await audit(vp, 'users-view');
		const csrf = await vp.getAttribute('meta[name=csrf-token]', 'content');
		const post = (p, body) => vp.evaluate(async ([u, b]) => (await fetch(u, { method: 'POST',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: b })).status, [p, body]);
		ok(await post('/users', 'name=mallory&role=admin&password=mallory-pw-1') === 403, 'a forged POST without a CSRF token is refused (403)');
		const forged = await post('/users', `name=mallory&role=admin&password=mallory-pw-1&csrf=${csrf}`);
		ok(forged === 403, 'with the right token the API still refuses the view user (403)', forged);
		ok(await post('/backups', `csrf=${csrf}`) === 403, 'and so it does a backup (403)');
		ok(await post('/users/admin/disabled', `disabled=true&csrf=${csrf}`) === 403, 'and disabling a user (403)');
		const users = await api('GET', '/api/v1/users', adm.json.token);
		ok(!users.json.items.some((u) => u.metadata.name === 'mallory'), 'no user was created by the forged posts');
		await vctx.close();

		// every daemon-wide page behind a Home Assistant style ingress: URLs under the prefix,
		// framing allowed; a token and a backup made through the forms via the proxy
		const proxy = await ingressProxy(BASE);
		const IBASE = `http://127.0.0.1:${proxy.address().port}${PREFIX}`;
		const ictx = await browser.newContext({ acceptDownloads: true });
		const ip = await ictx.newPage();
		ip.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
		await ip.goto(IBASE + '/login');
		await ip.fill('#username', 'admin');
		await ip.fill('#password', NEWPW);
		await submit(ip, 'main button[type=submit]');
		ok(new URL(ip.url()).pathname === PREFIX + '/', 'ingress: the admin logs in through the proxy', ip.url());
		await ip.goto(`${IBASE}/users/viewer`);
		await ip.fill('#t-description', 'through ingress');
		await ip.selectOption('#t-expires-in', '7d');
		await submit(ip, '#create-token button[type=submit]');
		const isecret = await ip.inputValue('#token-secret').catch(() => '');
		ok(new URL(ip.url()).pathname.startsWith(`${PREFIX}/users/viewer/tokens/tok-`) && /^rzt_/.test(isecret), 'ingress: a token is created, its page under the prefix with its secret', ip.url());
		const itok = new URL(ip.url()).pathname.split('/').pop();
		await audit(ip, 'token-secret-ingress');
		await ip.goto(`${IBASE}/backups`);
		await ip.fill('#b-name', 'ingress-backup');
		await submit(ip, '#create-backup button[type=submit]');
		ok(ip.url() === `${IBASE}/backups?toast=backup`, 'ingress: a backup is created, redirected under the prefix', ip.url());
		await audit(ip, 'backups-ingress');
		const ibad = [];
		const ipages = ['/providers', '/users', '/users/admin', '/users/viewer', `/users/viewer/tokens/${itok}`, `/users/viewer/tokens/${itok}/revoke`,
			'/users/viewer/delete', '/audit', '/audit?limit=2', '/audit?limit=2&user=admin&outcome=success', '/backups', '/backups/web-backup/delete'];
		for (const p of ipages) {
			const r = await ip.goto(IBASE + p);
			const h = r.headers();
			if (r.status() !== 200) ibad.push(`${p}: HTTP ${r.status()}`);
			if (/frame-ancestors/.test(h['content-security-policy'] || '') || h['x-frame-options']) ibad.push(`${p}: framing refused (${h['content-security-policy']}, ${h['x-frame-options']})`);
			for (const u of await urls(ip)) {
				if (!u.startsWith(PREFIX + '/')) ibad.push(`${p}: ${u}`);
			}
		}
		ok(ibad.length === 0, `ingress: on the ${ipages.length} daemon-wide pages every link, form and asset URL carries the prefix, and framing is allowed`, ibad.slice(0, 10).join('\n'));
		await ip.goto(`${IBASE}/audit?limit=2`);
		await ip.click('a[rel=next]');
		await ip.waitForURL(/continue=/);
		ok(new URL(ip.url()).pathname === `${PREFIX}/audit`, 'ingress: the audit log\'s next page stays under the prefix', ip.url());
		await ip.goto(`${IBASE}/backups`);
		const [idl] = await Promise.all([ip.waitForEvent('download'), ip.click(`a[href="${PREFIX}/backups/web-backup/manifest"]`)]);
		ok(idl.suggestedFilename() === 'web-backup.manifest.json', 'ingress: a manifest downloads through the proxy', idl.suggestedFilename());
		await ictx.close();
		proxy.close();

		// a backup deleted through its confirmation: toast, gone from the list, the API and the disk
		let ib = null;
		for (let i = 0; i < 40; i++) {
			ib = await api('GET', '/api/v1/backups/ingress-backup', adm.json.token);
			if (ib.json?.status?.phase === 'Completed') break;
			await page.waitForTimeout(250);
		}
		const ibFile = path.join(process.env.WEBUI_BACKUP_DIR, ib.json?.status?.file || 'ingress-backup.rzbackup');
		ok(ib.json?.status?.phase === 'Completed' && fs.existsSync(ibFile), 'the backup made through ingress is Completed, its file on disk', `${JSON.stringify(ib.json?.status)} ${ibFile}`);
		await page.goto(`${BASE}/backups/ingress-backup/delete`);
		await submit(page, '#confirm button[type=submit]');
		const left = await page.locator('#backups tbody tr').allTextContents();
		ok(page.url().endsWith('/backups?toast=deleted') && /Deleted/.test(await page.textContent('[role=status]')),
			'a backup is deleted through its confirmation (toast)', page.url());
		ok(!left.some((r) => /ingress-backup/.test(r)) && left.some((r) => /web-backup/.test(r)), 'it is gone from the list, the other backup kept', left.join(' | '));
		const ibGone = await api('GET', '/api/v1/backups/ingress-backup', adm.json.token);
		const ibList = await api('GET', '/api/v1/backups', adm.json.token);
		ok(ibGone.code === 404 && !ibList.json.items.some((b) => b.metadata.name === 'ingress-backup'), 'and from the API (404, not listed)', ibGone.code);
		ok(!fs.existsSync(ibFile) && fs.existsSync(path.join(process.env.WEBUI_BACKUP_DIR, 'web-backup.rzbackup')),
			'and its file is removed from the backup folder, the other\'s kept', fs.readdirSync(process.env.WEBUI_BACKUP_DIR).join(' '));
		await audit(page, 'backup-deleted');
		await ctx.close();
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
