"""One module per `mln` subcommand; cli.py registers them."""
