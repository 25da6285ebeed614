def wash_the_plate():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: put the plate in the sink
	find('plate')
	assert('close' to 'plate' )
		else: find('plate')
	grab('plate')
	find('sink')
	assert('plate' in 'hands' )
		else: find('plate')
		else: grab('plate')
	assert('close' to 'sink' )
		else: find('sink')
	putin('plate', 'sink')
	# 2: turn on the faucet
	find('faucet')
	assert('close' to 'faucet' )
		else: find('faucet')
	assert('faucet' is 'switchoff' )
		else: switchoff('faucet')
	switchon('faucet')
	# 3: scrub the plate with dishwashing liquid
	find('dishwashingliquid')
	assert('close' to 'dishwashingliquid' )
		else: find('dishwashingliquid')
	grab('dishwashingliquid')
	find('sink')
	assert('plate' in 'sink' )
		else: find('plate')
	# 4: put the dishwashing liquid back
	find('kitchencounter')
	assert('dishwashingliquid' in 'hands' )
		else: grab('dishwashingliquid')
	putback('dishwashingliquid', 'kitchencounter')
	# 5: turn off the faucet
	find('faucet')
	assert('faucet' is 'switchon' )
		else: switchon('faucet')
	switchoff('faucet')
	# 6: Done
