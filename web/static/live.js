// web/static/live.js - a live region's stream that is lost says so: a note at the top of
// the page's content ("Live updates lost: reconnecting…") while htmx's SSE extension
// reconnects, then "Live updates reconnected." for a few seconds once a stream is open
// again (its first message brings the region up to date). The note is a polite status
// region, there from the start so that screen readers announce its changes; it sits in the
// flow where the server's own messages show, so that it covers nothing (fixed over the page,
// on a phone it hid rows and fields). No request leaves the page.
(function () {
	'use strict';
	var note = null, lost = false, timer = 0, leaving = false;
	function show(text, kind) {
		if (!note) return;
		clearTimeout(timer);
		note.textContent = text;
		note.className = 'live-note live-note-' + kind;
		note.hidden = false;
	}
	document.addEventListener('DOMContentLoaded', function () {
		note = document.createElement('p');
		note.id = 'live-note';
		note.setAttribute('role', 'status');
		note.hidden = true;
		// under the server's message if the page has one
		var main = document.getElementById('main') || document.body;
		var first = main.firstElementChild;
		while (first && first.classList.contains('toast')) first = first.nextElementSibling;
		main.insertBefore(note, first);
	});
	// a page being left closes its streams: that is no loss
	window.addEventListener('pagehide', function () { leaving = true; });
	window.addEventListener('beforeunload', function () { leaving = true; });
	document.addEventListener('htmx:sseError', function () {
		if (leaving) return;
		lost = true;
		show('Live updates lost: reconnecting…', 'lost');
	});
	document.addEventListener('htmx:sseOpen', function () {
		if (!lost) return;
		lost = false;
		show('Live updates reconnected.', 'back');
		timer = setTimeout(function () { note.hidden = true; }, 5000);
	});
})();
