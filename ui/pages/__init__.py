"""One straight top-to-bottom script per page; each calls only ui.services."""
