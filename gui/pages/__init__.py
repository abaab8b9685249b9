"""The sidebar pages, one module each; the main window imports each on first use."""
