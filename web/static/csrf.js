// web/static/csrf.js - every htmx request carries the page's CSRF token: htmx fires
// htmx:configRequest before each request, and the X-CSRF-Token header set here from
// <meta name="csrf-token"> (web/templates/parts/top.html) is what core/web/ui.c checks on a
// POST that has no csrf form field. htmx's selfRequestsOnly keeps it on this origin.
document.addEventListener('htmx:configRequest', function (e) {
	var meta = document.querySelector('meta[name="csrf-token"]');
	if (meta !== null && meta.content !== '') {
		e.detail.headers['X-CSRF-Token'] = meta.content;
	}
});
