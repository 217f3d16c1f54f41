# rezusctl, the command-line client, is built from this directory (cli/*.c, prefix rzc_).
# Nothing is built here yet.
