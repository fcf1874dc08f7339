"""Sphinx configuration of cyborg-lite's release notes (reno)."""

project = 'cyborg-lite release notes'
copyright = 'cyborg-lite developers'
extensions = ['openstackdocstheme', 'reno.sphinxext']
html_theme = 'openstackdocs'
openstackdocs_repo_name = 'cyborg-lite'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
master_doc = 'index'
exclude_patterns = ['_build']
