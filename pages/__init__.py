"""The dashboard's pages, one screen per file (registered in :data:`dashboard.PAGES`)."""
