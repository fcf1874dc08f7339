"""Sphinx configuration of the cyborg-lite guide.

The configuration reference and the sample files are generated from the
code (oslo.config's and oslo.policy's Sphinx extensions), the API
reference from the OpenAPI descriptions the services serve, and
``_exts/install_checks.py`` fails the build when an install page runs a
command that no console script provides or sets an option that no
service registers.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '_exts'))

project = 'cyborg-lite'
copyright = 'cyborg-lite developers'
extensions = [
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
    'sphinxcontrib.openapi',
    'install_checks',
]

# openstackdocstheme
html_theme = 'openstackdocs'
openstackdocs_repo_name = 'cyborg-lite'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
openstackdocs_bug_project = 'cyborg-lite'
openstackdocs_bug_tag = 'docs'

# The sample files, generated into _static on each build.
ETC = os.path.join(HERE, '..', '..', 'etc')
config_generator_config_file = [
    (os.path.join(ETC, 'cyborg_lite', 'cyborg-lite-config-generator.conf'),
     '_static/cyborg-lite'),
    (os.path.join(ETC, 'placement_stub',
                  'placement-stub-config-generator.conf'),
     '_static/placement-stub'),
    (os.path.join(ETC, 'nova_shim', 'nova-shim-config-generator.conf'),
     '_static/nova-shim'),
]
policy_generator_config_file = [
    (os.path.join(ETC, 'cyborg_lite', 'cyborg-lite-policy-generator.conf'),
     '_static/cyborg-lite'),
    (os.path.join(ETC, 'placement_stub',
                  'placement-stub-policy-generator.conf'),
     '_static/placement-stub'),
    (os.path.join(ETC, 'nova_shim', 'nova-shim-policy-generator.conf'),
     '_static/nova-shim'),
]

exclude_patterns = ['_build']
master_doc = 'index'
pygments_style = 'native'
