"""Console scripts: ``nova-shim-compute`` (``compute``) and ``nova-shim``
(``cli``)."""
