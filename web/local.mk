# The WebUI's templates and vendored static assets are installed from this directory.
# Nothing is installed from here yet.
