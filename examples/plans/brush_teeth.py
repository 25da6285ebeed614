def brush_teeth():
	# 0: walk to bathroom
	walk('bathroom')
	# 1: grab the toothpaste and open it
	find('toothpaste')
	assert('close' to 'toothpaste' )
		else: find('toothpaste')
	grab('toothpaste')
	assert('toothpaste' is 'closed' )
		else: close('toothpaste')
	open('toothpaste')
	# 2: grab the toothbrush
	find('toothbrush')
	assert('close' to 'toothbrush' )
		else: find('toothbrush')
	grab('toothbrush')
	# 3: put the toothpaste back on the bathroom counter
	find('bathroomcounter')
	assert('toothpaste' in 'hands' )
		else: find('toothpaste')
		else: grab('toothpaste')
	putback('toothpaste', 'bathroomcounter')
	# 4: turn on the faucet
	find('faucet')
	assert('close' to 'faucet' )
		else: find('faucet')
	switchon('faucet')
	# 5: rinse the toothbrush in the sink
	find('sink')
	assert('toothbrush' in 'hands' )
		else: find('toothbrush')
		else: grab('toothbrush')
	putin('toothbrush', 'sink')
	# 6: turn off the faucet
	find('faucet')
	assert('faucet' is 'switchon' )
		else: switchon('faucet')
	switchoff('faucet')
	# 7: Done
