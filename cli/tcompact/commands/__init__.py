"""One module per command; each is a thin shell: parse options, one library call, render."""
