"""A shorthand for the API rules of one resource.

Every API rule is for project-scoped tokens only (``scope_types``), as
upstream's: oslo.policy refuses a system- or domain-scoped token before
it reads the check string, and a policy file cannot change that.
"""

from oslo_policy import policy

SCOPE_TYPES = ['project']


def rule(name, check, description, method, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{'method': method, 'path': path}],
        scope_types=SCOPE_TYPES)
