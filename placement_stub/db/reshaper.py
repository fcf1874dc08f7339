"""The reshaper: move inventory and allocations between providers in one
transaction."""

from placement_stub.db import allocations
from placement_stub.db import api
from placement_stub.db import inventories
from placement_stub.db import providers


@api.writer
def reshape(ctx, new_inventories: list, allocation_requests: list) -> None:
    """Replace the inventories of some providers and the allocations of
    some consumers, all or nothing.

    ``new_inventories`` pairs each provider (a dict, as read by the
    caller when it checked the generation) with its complete new
    ``{rc: fields}``.
    First each provider gets its old inventory merged with the new (so
    allocations can move before any class goes), then the allocations
    are replaced, then each provider's inventory becomes exactly the new
    one (409 if a class that goes still has allocations).
    """
    for rp, invs in new_inventories:
        if not invs:
            continue
        current = inventories.get_inventories(ctx, [rp['id']])[rp['id']]
        interim = dict(current, **invs)
        inventories.set_inventories(ctx, rp, rp['generation'], interim)
    if allocation_requests:
        allocations.replace_allocations(ctx, allocation_requests)
    for rp, invs in new_inventories:
        fresh = providers.get_provider(ctx, rp['uuid'])
        inventories.set_inventories(ctx, fresh, fresh['generation'], invs)
