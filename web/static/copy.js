// web/static/copy.js - Copy buttons: a <button data-copy="ID"> copies the value (or the text)
// of the element with that id to the clipboard and says "Copied" on the button and to screen
// readers (its aria-live sibling [data-copy-status]) for a few seconds. A button, so the
// keyboard reaches it and Enter or Space press it. Where the clipboard API is refused, the
// text is selected so that Ctrl+C copies it, and the button says so. No request leaves the
// page.
(function () {
	'use strict';
	function say(btn, text) {
		var label = btn.getAttribute('data-label') || btn.textContent;
		var status = btn.parentNode.querySelector('[data-copy-status]');
		btn.setAttribute('data-label', label);
		btn.textContent = text;
		btn.classList.add('copied');
		if (status !== null) status.textContent = text;
		clearTimeout(btn._copyTimer);
		btn._copyTimer = setTimeout(function () {
			btn.textContent = label;
			btn.classList.remove('copied');
			if (status !== null) status.textContent = '';
		}, 4000);
	}
	function fallback(btn, el) {
		if (el.select) { el.focus(); el.select(); }
		var done = false;
		try { done = document.execCommand('copy'); } catch (e) { done = false; }
		say(btn, done ? 'Copied' : 'Selected: press Ctrl+C');
	}
	document.addEventListener('click', function (e) {
		var btn = e.target.closest ? e.target.closest('button[data-copy]') : null;
		if (btn === null) return;
		var el = document.getElementById(btn.getAttribute('data-copy'));
		if (el === null) return;
		var text = el.value !== undefined ? el.value : el.textContent;
		if (navigator.clipboard && window.isSecureContext) {
			navigator.clipboard.writeText(text).then(function () { say(btn, 'Copied'); },
				function () { fallback(btn, el); });
		} else {
			fallback(btn, el);
		}
	});
})();
