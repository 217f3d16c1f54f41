// tests/web/oidc-cli.mjs - the person at the browser for `rezusctl login --oidc`
// (tests/integration/oidc-cli.sh): Debian's chromium, driven by playwright-core, at the
// stand-in provider (tests/stand-ins/oidc-provider.mjs). One sign-in per run, chosen by
// MODE:
//   signin        open URL (rezusctl's authorization URL), sign in as LOGIN, consent; the
//                 provider redirects to rezusctl's loopback callback
//   cancel        open URL and cancel at the provider's login form (access_denied)
//   device        open URL (the verification URI), enter CODE, confirm, sign in as LOGIN
//   device-abort  open URL, enter CODE, abort at the confirmation (access_denied)
// Prints "PAGE <text>" (where the browser ended: rezusctl's page or the provider's) and, when
// the redirect carried one, "AUTHCODE <code>" (for the script to look for it in logs); exits
// non-zero when the pages were not as expected.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');

const { MODE, URL: START, LOGIN, CODE } = process.env;
const NAV = { waitUntil: 'domcontentloaded' };

// Click the provider's "Continue" (a native client's consent, the device confirmation)
// while it shows, until done() holds.
async function continueUntil(page, done) {
	for (let i = 0; i < 150 && !(await done()); i++) {
		if (await page.isVisible('button:has-text("Continue")').catch(() => false)) {
			await page.click('button:has-text("Continue")').catch(() => {});
		}
		await page.waitForTimeout(100);
	}
}

async function login(page) {
	await page.waitForSelector('input[name=login]');
	await page.fill('input[name=login]', LOGIN);
	await page.fill('input[name=password]', 'any-password');
	await page.click('button[type=submit]');
}

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		const page = await (await browser.newContext()).newPage();
		let landed = null;
		page.on('request', (r) => {
			const u = new URL(r.url());
			if (u.hostname === '127.0.0.1' && u.pathname === '/callback') landed = u;
		});
		await page.goto(START, NAV);
		if (MODE === 'signin') {
			await login(page);
			await continueUntil(page, async () => landed !== null && /rezusctl|Signed in/.test(await page.textContent('body').catch(() => '')));
		} else if (MODE === 'cancel') {
			await page.waitForSelector('input[name=login]');
			await page.click('text=[ Cancel ]');
			await page.waitForURL((u) => u.pathname === '/callback', NAV);
		} else {
			await page.waitForSelector('input[name=user_code]');
			await page.fill('input[name=user_code]', CODE);
			await page.click('button[type=submit]');
			await page.waitForSelector('text=Confirm Device');
			if (MODE === 'device-abort') {
				await page.click('button[name=abort]');
			} else {
				await page.click('button:has-text("Continue")');
				await login(page);
				await continueUntil(page, async () => /Sign-in Success/.test(await page.textContent('body').catch(() => '')));
			}
			await page.waitForTimeout(300);
		}
		await page.waitForLoadState('domcontentloaded');
		console.log(`PAGE ${(await page.textContent('body')).replace(/\s+/g, ' ').trim().slice(0, 300)}`);
		const code = landed && landed.searchParams.get('code');
		if (code) console.log(`AUTHCODE ${code}`);
	} finally {
		await browser.close();
	}
}

main().then(() => process.exit(0), (e) => {
	console.log(`# ${String(e.stack || e).split('\n').slice(0, 8).join('\n# ')}`);
	process.exit(1);
});
