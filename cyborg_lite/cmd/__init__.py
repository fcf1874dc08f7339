"""Console scripts, one module each.

oslo.messaging imports oslo.service, which warns on import that eventlet
is deprecated; cyborg-lite never uses eventlet, so the scripts hide that
warning from operators.
"""

import warnings

warnings.filterwarnings('ignore', module='oslo_service')
