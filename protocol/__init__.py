"""stdin/stdout front-ends over one shared session, and the `mallard` command line."""
