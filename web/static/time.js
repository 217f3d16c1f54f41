// web/static/time.js - times as people read them: every <time datetime="…" data-rel> the
// server wrote with the exact UTC time becomes "3 min ago" (or "in 5 s"), the exact time kept
// in its title (on hover) and for screen readers; refreshed every 15 s and after htmx swaps
// (live tables). Without JavaScript the exact time stays. No request leaves the page.
(function () {
	'use strict';
	function rel(ms) {
		var s = Math.round(Math.abs(ms) / 1000), t;
		if (s < 45) t = s + ' s';
		else if (s < 45 * 60) t = Math.round(s / 60) + ' min';
		else if (s < 36 * 3600) t = Math.round(s / 3600) + ' h';
		else t = Math.round(s / 86400) + ' d';
		return ms >= 0 ? t + ' ago' : 'in ' + t;
	}
	function update(root) {
		var els = (root || document).querySelectorAll('time[data-rel]'), now = Date.now();
		for (var i = 0; i < els.length; i++) {
			var el = els[i], when = Date.parse(el.getAttribute('datetime'));
			if (isNaN(when)) continue;
			if (!el.hasAttribute('title')) el.setAttribute('title', el.textContent);
			el.textContent = rel(now - when);
		}
	}
	document.addEventListener('DOMContentLoaded', function () { update(document); });
	document.addEventListener('htmx:afterSwap', function (e) { update(e.target); });
	document.addEventListener('htmx:sseMessage', function () { update(document); });
	setInterval(function () { update(document); }, 15000);
})();
