"""Reference code of the book. Pages show these files by inclusion; tests/ tests them."""
