"""What the build makes from the pages, beside the site itself: one module per product, each
reading the pages through the page model (bookcheck.model) and imported by the build hooks
(overrides/) or run by a make target.

    indexes       the error index (snippets/error_index.json, the errors page), section anchors, the
                  table of what differs on the other verified torch versions
    apis          the API index (every PyTorch name the code of the pages uses) and its links
    torch_docs    where each PyTorch name is documented, for the pinned version
    deck          the drills as an Anki deck (downloads/)
    notebook_gen  the generated notebooks, the workshop's included (make notebooks)
    wheel         the `snippets` wheel the site offers (downloads/)
    pdf           the whole book as one PDF (make pdf)
    site_build    the built site as a cache: `make build` builds only when what it reads changed
"""
