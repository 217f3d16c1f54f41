// tests/web/tenant-console.mjs - a tenant's console in the browser, run by webui-tenant.mjs
// on its Ready tenant (cp and workers, one machine each): the overview at a glance (machines
// as badges by node group, the current run, endpoints, conditions as badges, Events newest
// first), a machine's page, the Add a node group form keeping what was typed with one place
// for its errors, and the live pages: a node group added through the API shows on the node
// groups tab, its run on the runs tab and its machine on the machines tab (the count above
// the table always that of its rows) and in the header, without a reload; its deletion says
// its run waits for approval, the header says so live, and on the run's page, once the plan is
// approved, the phase and the buttons follow without a reload. A lost stream says so and
// reconnects; a plan run starts from the runs tab (a viewer has no such button); a tenant
// without machines is deleted without a word of destroying them; at 375 px the node groups'
// Scale and Delete are on screen. Every page at 1280 and 375 px in shots.
import path from 'node:path';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function tenantConsole(c) {
	const { browser, page, api, tok, T, BASE, ok, audit, until, submit, shots } = c;
	const text = async (p, sel) => ((await p.textContent(sel).catch(() => '')) || '').replace(/\s+/g, ' ').trim();
	const stay = (p) => p.evaluate(() => { window.__stayed = true; });
	const stayed = (p) => p.evaluate(() => window.__stayed === true);
	// shoot(p, name): the page at 1280 and 375 px (full page) into shots
	const shoot = async (p, name) => {
		for (const w of [1280, 375]) {
			await p.setViewportSize({ width: w, height: w === 375 ? 812 : 900 });
			await p.screenshot({ path: path.join(shots, `console-${name}-${w}.png`), fullPage: true, timeout: 30000 }).catch((e) => console.log(`# screenshot ${name}-${w}: ${e.message.split('\n')[0]}`));
		}
		await p.setViewportSize({ width: 1280, height: 900 });
	};
	const runs = async () => (await api('GET', `/api/v1/tenants/${T}/runs`, tok)).json?.items || [];
	const idle = async () => (await runs()).every((x) => !/Queued|Running|AwaitingApproval/.test(x.status?.phase || 'Queued'));

	// 1. the overview at a glance
	await page.goto(`${BASE}/tenants/${T}`);
	const tiles = await page.evaluate(() => [...document.querySelectorAll('#machine-grid li.machine-tile')].map((e) => e.textContent.replace(/\s+/g, ' ').trim()));
	const groupsShown = await page.evaluate(() => [...document.querySelectorAll('#machine-grid h3')].map((e) => e.textContent.replace(/\s+/g, ' ').trim()));
	ok(tiles.length === 2 && /^cp-0 Running Ready$/.test(tiles[0]) && /^workers-0 Running Ready$/.test(tiles[1]) &&
		/^cp controlplane, 1 of 1 ready/.test(groupsShown[0] || '') && /^workers worker, 1 of 1 ready/.test(groupsShown[1] || ''),
		'overview: the machines as badges (stage, readiness) by node group, the control plane first', `${groupsShown.join(' | ')} / ${tiles.join(' | ')}`);
	const badges = await page.locator('#machine-grid .badge.badge-ok').count();
	ok(badges === 4, `overview: the badges are coloured by tone as well (${badges} green of 4)`);
	const runLink = await page.getAttribute('#overview-run a', 'href').catch(() => null);
	ok(runLink !== null && new RegExp(`/tenants/${T}/runs/run-`).test(runLink) && /Succeeded/.test(await text(page, '#overview-run')),
		'overview: the current run, linked, with its phase', await text(page, '#overview-run'));
	ok(/:\d+|\d+\.\d+/.test(await text(page, '#overview-endpoint')) && /none yet/.test(await text(page, '#overview-snapshot')) && /none yet/.test(await text(page, '#overview-upgrade')),
		'overview: the endpoint, and no snapshot or upgrade yet', `${await text(page, '#overview-endpoint')} / ${await text(page, '#overview-snapshot')}`);
	const conds = await page.evaluate(() => [...document.querySelectorAll('#overview-conditions .badge')].map((b) => `${b.className}:${b.textContent}`));
	ok(conds.length >= 3 && conds.some((x) => /badge-ok:Ready$/.test(x)) && conds.some((x) => /badge-ok:Machines ready$/.test(x)) &&
		!conds.some((x) => /True|False|[a-z][A-Z]/.test(x.split(':')[1])), 'overview: the conditions as badges people read (Ready, Machines ready, green), no CamelCase or True/False', conds.join(', '));
	const condText = (await text(page, '#overview-conditions')).replace(/\s+/g, ' ');
	ok(!/AllReady|NoControlPlane|[a-z][A-Z][a-z]+ (True|False)/.test(condText), 'overview: their reasons in words too', condText.slice(0, 300));
	const evText = (await text(page, '#overview-events')).replace(/\s+/g, ' ');
	ok(!/RunStarted|started started|Run started started|phase Ready/.test(evText) && /Run (started|succeeded)/.test(evText), 'overview: the Events say their reason in words, once', evText.slice(0, 300));
	const ep = await text(page, '#overview-endpoint');
	ok(/^https:\/\/\S+:6443/.test(ep.trim()) && !/not known yet/.test(ep), 'overview: a Ready tenant\'s endpoint is its first control plane machine\'s (the tenant names none)', ep);
	const talos = (await text(page, '#overview-talos')).replace(/\s+/g, ' ').trim();
	const tv = talos.match(/^(\d+\.\d+\.\d+)/)?.[1] || '';
	ok(tv !== '' && talos.split(tv).length === 2, 'overview: the Talos version said once when it runs what is wanted', talos);
	const evTimes = await page.evaluate(() => [...document.querySelectorAll('#overview-events time')].map((t) => t.getAttribute('datetime')));
	const sortedDesc = evTimes.length > 1 && evTimes.every((t, i) => i === 0 || evTimes[i - 1] >= t);
	const evRel = await page.evaluate(() => { const t = document.querySelector('#overview-events time'); return t ? `${t.textContent}|${t.getAttribute('title')}` : ''; });
	ok(sortedDesc && /ago|in \d/.test(evRel) && /UTC/.test(evRel), 'overview: the newest Events first, times relative with the exact time on hover', `${evTimes.slice(0, 4).join(' ')} / ${evRel}`);
	await audit(page, 'console-overview');
	await shoot(page, 'overview');
	// the overview is live as a whole: its first read does not replace what the page shows
	// (the focus stays), then a run started through the API shows in Now and among the
	// Events, with no reload
	await page.goto(`${BASE}/tenants/${T}`);
	await stay(page);
	await page.focus('#link-edit-tenant');
	await sleep(1500);
	ok(await page.evaluate(() => document.activeElement?.id) === 'link-edit-tenant',
		'overview: its live region does not take the focus away when it starts');
	const ovRun = (await api('POST', `/api/v1/tenants/${T}/runs`, tok, { spec: { operation: 'plan' } })).json?.metadata?.name;
	const ov0 = Date.now();
	const ovSeen = await page.waitForFunction((n) => (document.querySelector('#overview-run')?.textContent || '').includes(n) &&
		(document.querySelector('#overview-events')?.textContent || '').includes(n), ovRun, { timeout: 15000 }).then(() => true, () => false);
	ok(ovSeen && await stayed(page), `overview: a run started through the API shows in Now and in the Events live (${Date.now() - ov0} ms, no reload)`,
		`${await text(page, '#overview-run')} / ${(await text(page, '#overview-events')).slice(0, 200)}`);
	await until(20, idle);

	// 2. a machine's page, from its row on the machines tab
	await page.goto(`${BASE}/tenants/${T}/machines`);
	await submit(page, '#machine-cp-0 a');
	ok(new URL(page.url()).pathname === `/tenants/${T}/machines/cp-0`, 'a machine\'s row links to its page', page.url());
	const mtalos = await text(page, '#machine-talos');
	ok(/Running/.test(await text(page, '#machine-stage')) && /Ready/.test(await text(page, '#machine-ready')) && /1\.11\.5/.test(mtalos) &&
		(await page.getAttribute('#machine-nodegroup', 'href'))?.endsWith(`/tenants/${T}/nodegroups#nodegroup-cp`) && (await text(page, '#machine-address')).length > 0,
		'the machine\'s page: stage, readiness, Talos version, address and its node group (a link)', `${await text(page, 'main')}`.slice(0, 400));
	const mev = await page.locator('#machine-events li').count();
	ok(mev > 0 && /cp-0|Machine/.test(await text(page, '#machine-events')) || mev === 0 && /No events about this machine/.test(await text(page, 'main')),
		`and its Events (${mev})`, await text(page, '#machine-events'));
	const r404 = await page.goto(`${BASE}/tenants/${T}/machines/nope-0`);
	ok(r404.status() === 404 && /no such machine/.test(await text(page, 'main')), `a machine that does not exist: 404 with a sentence (${r404.status()})`);
	await page.goto(`${BASE}/tenants/${T}/machines/cp-0`);
	await audit(page, 'console-machine');
	await shoot(page, 'machine');

	// 3. the Add a node group form keeps what was typed; one place for its errors
	await page.goto(`${BASE}/tenants/${T}/nodegroups`);
	await page.fill('#ng-name', 'more');
	await page.selectOption('#ng-role', 'worker');
	await page.fill('#ng-count', '-1');
	await submit(page, '#add-nodegroup button[type=submit]');
	const role = await page.inputValue('#ng-role');
	ok(role === 'worker' && await page.inputValue('#ng-count') === '-1' && await page.inputValue('#ng-name') === 'more',
		`after an error the form keeps what was typed (Role ${role}, Machines -1, Name more)`);
	const cerr = await text(page, '#ng-count-error');
	const summary = await page.evaluate(() => [...document.querySelectorAll('#form-problems a')].map((a) => `${a.getAttribute('href')} ${a.textContent}`));
	const toast = await text(page, '[role=status].toast');
	ok(cerr.length > 0 && summary.length === 1 && summary[0] === '#ng-count Machines' && !toast.includes(cerr) && (await text(page, 'main')).split(cerr).length === 2,
		'the error is beside its field and in a summary above linking to it, not again in a banner', `field: ${cerr} / summary: ${summary.join(' | ')} / toast: ${toast}`);
	await audit(page, 'console-nodegroup-error');
	await shoot(page, 'nodegroup-error');
	await page.fill('#ng-name', 'Bad_Name');
	await submit(page, '#add-nodegroup button[type=submit]');
	const main2 = await text(page, 'main');
	const summary2 = await page.evaluate(() => [...document.querySelectorAll('#form-problems a')].map((a) => a.getAttribute('href')));
	ok(!/details\.causes|is invalid:/.test(main2) && summary2.join(' ') === '#ng-name #ng-count' && await page.inputValue('#ng-role') === 'worker',
		'two errors: each beside its field, both in the summary in the form\'s order, no API jargon (details.causes)', `${summary2.join(' ')} / ${main2.slice(0, 300)}`);

	// 4. live: a node group added through the API shows on the node groups, runs and machines
	// tabs and in the header without a reload; the count above the machines is its rows'
	const ctx = page.context();
	const pNg = await ctx.newPage();
	const pRuns = await ctx.newPage();
	const pM = await ctx.newPage();
	await pNg.goto(`${BASE}/tenants/${T}/nodegroups`);
	await pRuns.goto(`${BASE}/tenants/${T}/runs`);
	await pM.goto(`${BASE}/tenants/${T}/machines`);
	for (const p of [pNg, pRuns, pM]) await stay(p);
	const runsBefore = new Set((await runs()).map((r) => r.metadata.name));
	await sleep(500); // the streams are open
	const t0 = Date.now();
	const made = await api('POST', `/api/v1/tenants/${T}/nodegroups`, tok, { metadata: { name: 'extra' }, spec: { role: 'worker', count: 1, providerClass: 'sim' } });
	const ngLive = await pNg.waitForSelector('#nodegroup-extra', { timeout: 2000 }).then(() => Date.now() - t0, () => -1);
	ok(made.code === 201 && ngLive >= 0, `a node group added through the API shows on the node groups tab within 2 s, no reload (${ngLive} ms)`);
	const runLive = await until(10, async () => {
		const ids = await pRuns.evaluate(() => [...document.querySelectorAll('#run-rows tr[id^=run-]')].map((r) => r.id.slice(4)));
		return ids.some((id) => !runsBefore.has(id));
	});
	ok(runLive, 'its run shows on the runs tab, no reload', await text(pRuns, '#run-rows'));
	const mismatch = [];
	let sawExtra = false;
	const deadline = Date.now() + 40000;
	while (Date.now() < deadline) {
		const s = await pM.evaluate(() => ({ count: document.querySelector('#machines-count')?.textContent.trim() || '', rows: document.querySelectorAll('#machine-rows tr[id^=machine-]').length,
			extra: document.querySelector('#machine-extra-0')?.textContent.replace(/\s+/g, ' ') || '' }));
		const m = s.count.match(/(\d+) of (\d+)/);
		if (!m || Number(m[2]) !== s.rows) mismatch.push(`${s.count} above ${s.rows} rows`);
		if (/Running Ready/.test(s.extra)) { sawExtra = true; break; }
		await sleep(100);
	}
	ok(sawExtra && mismatch.length === 0, 'the machines tab: its new machine comes up live, the count above the table always matches its rows', mismatch.slice(0, 5).join('\n'));
	const headLive = await pM.waitForFunction(() => /3 of 3 machines ready/.test(document.querySelector('#tenant-machines')?.textContent || ''), null, { timeout: 15000 }).then(() => true, () => false);
	ok(headLive && await stayed(pM) && await stayed(pNg) && await stayed(pRuns), 'the tenant header follows live (3 of 3 machines ready), no page reloaded', await text(pM, '#tenant-head'));
	ok(/1 of 1 ready/.test(await text(pNg, '#nodegroup-extra')), 'the node group\'s row shows its machine ready, live', await text(pNg, '#nodegroup-extra'));
	await audit(pM, 'console-machines');
	await shoot(pM, 'machines');
	await audit(pRuns, 'console-runs');
	await shoot(pRuns, 'runs');
	ok(await until(30, idle), 'its run ends');

	// 5. deleting it: the confirmation in the singular, the message says its run waits for
	// approval, the header too (live); approved on the run's page, phase and buttons follow
	await page.goto(`${BASE}/tenants/${T}/nodegroups/extra/delete`);
	const conf = await text(page, 'main');
	ok(/destroys its machine, with everything on it: extra-0/.test(conf) && !/1 machines/.test(conf) && /waits for someone to approve its plan/.test(conf),
		'deleting a node group of one machine: "its machine", in the singular, and that its run waits for approval', conf.slice(0, 400));
	await audit(page, 'console-delete-nodegroup');
	await shoot(page, 'delete-nodegroup');
	await submit(page, 'main form[action$="/extra/delete"] button[type=submit]');
	const dtoast = await text(page, '[role=status]');
	ok(/waits for someone to approve its plan/.test(dtoast) && !/^Deleted\.$/.test(dtoast), 'its message says the run waits for approval, not "Deleted."', dtoast);
	await stay(page);
	const waitingLive = await page.waitForFunction(() => /Awaiting approval[\s\S]*waits for approval/.test(document.querySelector('#tenant-awaiting')?.textContent || ''), null, { timeout: 20000 }).then(() => true, () => false);
	ok(waitingLive && await stayed(page), 'the header shows the run waiting for approval, live', await text(page, '#tenant-head'));
	const waiting = (await runs()).find((r) => r.status?.phase === 'AwaitingApproval')?.metadata?.name || '';
	const inList = await pRuns.waitForFunction((id) => /Awaiting approval/.test(document.querySelector(`#run-${id}`)?.textContent || ''), waiting, { timeout: 5000 }).then(() => true, () => false);
	ok(waiting !== '' && inList, `the runs tab shows it AwaitingApproval, live (${waiting})`);
	await page.goto(`${BASE}/tenants/${T}/runs/${waiting}`);
	ok(/^Awaiting approval$/.test((await text(page, '#run-phase')).trim()), 'the run\'s phase in words (Awaiting approval), not CamelCase', await text(page, '#run-phase'));
	const planText = (await text(page, 'section[aria-labelledby=h-plan]')).replace(/\s+/g, ' ');
	ok(/no longer in the configuration/.test(planText) && !/_because_|delete_/.test(planText), 'the plan says why in words (no longer in the configuration), not tofu\'s reason code', planText.slice(0, 300));
	await audit(page, 'console-run-awaiting');
	await shoot(page, 'run-awaiting');
	await page.fill('#reason', 'approved in the console test');
	await submit(page, 'main form[action$="/approve"] button');
	await stay(page);
	const over = await page.waitForFunction(() => /Succeeded/.test(document.querySelector('#run-phase')?.textContent || '') &&
		!document.querySelector('main form[action$="/cancel"]') && !document.querySelector('main form[action$="/approve"]'), null, { timeout: 30000 }).then(() => true, () => false);
	ok(over && await stayed(page), 'after Approve the plan, the run page\'s phase becomes Succeeded and Cancel goes, without a reload',
		`${await text(page, '#run-head')}`.slice(0, 300));
	const listOver = await pRuns.waitForFunction((id) => /Succeeded/.test(document.querySelector(`#run-${id}`)?.textContent || ''), waiting, { timeout: 5000 }).then(() => true, () => false);
	ok(listOver && await stayed(pRuns), 'and the runs tab shows it Succeeded, live');
	const doneToast = (await page.locator('.toast').allTextContents()).join(' ');
	ok(!/next free slot|applies on/.test(doneToast), 'on a run that has ended, the toast does not say it is still to apply', doneToast);
	await audit(page, 'console-run-done');
	await shoot(page, 'run-done');
	ok(await until(30, idle), 'the runs end');

	// 6. a lost stream says so and reconnects: the first connection of the machines' stream
	// ends at once (as when the daemon restarts or a proxy cuts it), the next is the daemon's
	const pL = await ctx.newPage();
	let cut = 0;
	await pL.route(/\/ui\/live\/tenants\/[^/]+\/machines(\?|$)/, (route) => {
		if (cut++ < 1) return route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'retry: 400\n\n' });
		return route.continue();
	});
	await pL.addInitScript(() => {
		window.__notes = [];
		document.addEventListener('DOMContentLoaded', () => {
			new MutationObserver(() => {
				const n = document.querySelector('#live-note');
				const t = n && !n.hidden ? n.textContent : '';
				if (t && window.__notes[window.__notes.length - 1] !== t) window.__notes.push(t);
			}).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
		});
	});
	await pL.goto(`${BASE}/tenants/${T}/machines`);
	const back = await pL.waitForFunction(() => window.__notes.some((t) => /reconnected/.test(t)), null, { timeout: 15000 }).then(() => true, () => false);
	const notes = await pL.evaluate(() => window.__notes);
	const rowsBack = await pL.locator('#machine-rows tr[id^=machine-]').count();
	ok(back && /Live updates lost: reconnecting/.test(notes[0] || '') && /reconnected/.test(notes[1] || '') && cut >= 2 && rowsBack >= 2,
		`a lost stream says so, reconnects, and says that too (${cut} connections; ${rowsBack} rows after)`, notes.join(' | '));
	await pL.waitForFunction(() => /Live updates/.test(document.querySelector('#live-note')?.textContent || ''), null, { timeout: 1000 }).catch(() => {});
	// at 375 px the note covers nothing: it is in the page's flow, and no part of the page
	// (a row, a field) lies under it
	await pL.evaluate(() => { const n = document.querySelector('#live-note'); n.hidden = false; n.textContent = 'Live updates reconnected.'; });
	await pL.setViewportSize({ width: 375, height: 812 });
	const under = await pL.evaluate(() => {
		const n = document.querySelector('#live-note');
		const nb = n.getBoundingClientRect();
		const hit = [...document.querySelectorAll('main *, header *, footer')].filter((e) => !n.contains(e) && e.children.length === 0 && e.getClientRects().length > 0)
			.filter((e) => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0 && b.left < nb.right && b.right > nb.left && b.top < nb.bottom && b.bottom > nb.top; })
			.map((e) => `${e.tagName.toLowerCase()} "${e.textContent.trim().slice(0, 30)}"`);
		return `${getComputedStyle(n).position}${hit.length ? ': over ' + hit.slice(0, 5).join(', ') : ''}`;
	});
	ok(under === 'static', 'at 375 px the live-updates note is in the page\'s flow and covers nothing', under);
	await pL.setViewportSize({ width: 1280, height: 900 });
	await shoot(pL, 'live-note');
	await pL.close();

	// 7. a plan run from the runs tab; its page follows it to its end
	await pRuns.reload();
	await submit(pRuns, '#start-plan');
	ok(/\/runs\/run-[0-9a-z]+\?toast=planstarted$/.test(pRuns.url()) && /Plan run started/.test(await text(pRuns, '[role=status]')), 'Plan now starts a plan run and shows its page', pRuns.url());
	await stay(pRuns);
	const planned = await pRuns.waitForFunction(() => /Succeeded/.test(document.querySelector('#run-phase')?.textContent || '') && !document.querySelector('main form[action$="/cancel"]'), null, { timeout: 30000 }).then(() => true, () => false);
	ok(planned && await stayed(pRuns) && /plan/.test(await text(pRuns, '#run-head')), 'the plan run ends Succeeded on its page, live, with no Cancel', await text(pRuns, '#run-head'));
	const opOf = (await runs()).find((r) => pRuns.url().includes(r.metadata.name))?.spec?.operation;
	ok(opOf === 'plan', `the API has it as a plan run (${opOf})`);
	ok(await until(30, idle), 'and nothing else runs');

	// a page's stream sends nothing the page has already: its own HTML swapped in again would
	// take the focus away from where the keyboard left it
	await pM.addInitScript(() => { window.__swaps = 0; document.addEventListener('htmx:sseMessage', () => { window.__swaps++; }); });
	await pM.goto(`${BASE}/tenants/${T}/machines`);
	await pM.focus('#machine-cp-0 a');
	await sleep(1500);
	const swaps = await pM.evaluate(() => window.__swaps);
	const focusId = await pM.evaluate(() => document.activeElement?.closest('tr')?.id || document.activeElement?.tagName);
	ok(swaps === 0 && focusId === 'machine-cp-0', `a page's stream sends nothing it has already (${swaps} swaps in 1.5 s), the focus stays (${focusId})`);

	// 8. at 375 px the node groups' Scale and Delete are on screen, not behind a sideways scroll
	await pNg.setViewportSize({ width: 375, height: 812 });
	await pNg.goto(`${BASE}/tenants/${T}/nodegroups`);
	const reach = await pNg.evaluate(() => {
		const b = document.querySelector('#nodegroup-workers button[type=submit]').getBoundingClientRect();
		const d = document.querySelector('#nodegroup-workers a[href$="/delete"]').getBoundingClientRect();
		return { scale: Math.round(b.right), del: Math.round(d.right), doc: document.documentElement.scrollWidth, vw: window.innerWidth };
	});
	ok(reach.scale <= reach.vw && reach.del <= reach.vw && reach.doc <= reach.vw, 'at 375 px the node groups\' Scale and Delete are on screen, with no sideways scroll', JSON.stringify(reach));
	await pNg.setViewportSize({ width: 1280, height: 900 });
	await audit(pNg, 'console-nodegroups');
	await shoot(pNg, 'nodegroups');

	// 9. a viewer: no Plan now or Apply now, no form on the console's pages
	await api('POST', '/api/v1/users', tok, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'looker' }, spec: { role: 'view', password: 'looker-pw-123456' } });
	const vctx = await browser.newContext();
	const vp = await vctx.newPage();
	await vp.goto(BASE + '/');
	await vp.fill('#username', 'looker');
	await vp.fill('#password', 'looker-pw-123456');
	await submit(vp, 'main button[type=submit]');
	const forms = [];
	for (const p of ['', '/nodegroups', '/machines', '/runs', '/machines/cp-0', `/runs/${waiting}`]) {
		await vp.goto(`${BASE}/tenants/${T}${p}`);
		const n = await vp.locator('form[method=post]:not([action$="/logout"])').count();
		if (n > 0) forms.push(`${p}: ${n}`);
	}
	ok(forms.length === 0 && await vp.locator('#start-plan, #start-apply').count() === 0, 'a viewer has no Plan now, Apply now or any form on the console\'s pages', forms.join(', '));
	const csrf = await vp.getAttribute('meta[name=csrf-token]', 'content');
	const forged = await vp.evaluate(async (b) => (await fetch(b.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `csrf=${b.csrf}&operation=plan` })).status, { url: `/tenants/${T}/runs`, csrf });
	ok(forged === 403, `a viewer's forged Plan now is refused by the API (${forged})`);
	await vctx.close();

	// 10. a tenant with no machines: its deletion says nothing of destroying machines
	await api('POST', '/api/v1/tenants', tok, { metadata: { name: 'tw-empty' }, spec: { clusterProvider: 'sim' } });
	await page.goto(`${BASE}/tenants/tw-empty/delete`);
	const ec = await text(page, 'main');
	ok(/no node groups and no machines: nothing is destroyed/.test(ec) && !/machines\./.test(ec.replace('no machines: nothing', '')), 'the confirmation of a tenant with no machines says nothing is destroyed', ec.slice(0, 300));
	await audit(page, 'console-delete-tenant-empty');
	await shoot(page, 'delete-tenant-empty');
	await submit(page, 'main form button[type=submit]');
	const et = await text(page, '[role=status]');
	ok(/no machines to destroy/.test(et) && !/a run destroys its machines/.test(et), 'and its message says it has no machines to destroy', et);
	for (const p of [pNg, pRuns, pM]) await p.close();
}
